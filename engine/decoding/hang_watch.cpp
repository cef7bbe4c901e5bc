#include "engine/decoding/hang_watch.h"

#include <cinttypes>
#include <cstdio>

#include "engine/util/json_text.h"

namespace profsh {

void CollectiveLog::Entered(int64_t tid, std::string_view name, const stream::StreamEvent& e) {
  int64_t& calls = calls_[std::string(name)];
  Entry entry{tid, std::string(name), calls++, false, e.ticks};
  // A program that numbers its collectives (an NVTX payload, as NCCL's own ranges and fake
  // ones in tests carry) gives the number itself.
  const bool integer =
      e.attrs.payload_type == stream::kPayloadU64 || e.attrs.payload_type == stream::kPayloadI64 ||
      e.attrs.payload_type == stream::kPayloadU32 || e.attrs.payload_type == stream::kPayloadI32;
  if ((e.attrs.flags & stream::kAttrPayload) && integer) {
    entry.seq = static_cast<int64_t>(e.attrs.payload);
    entry.seq_recorded = true;
  }
  last_.push_back(std::move(entry));
  if (last_.size() > kKept) last_.pop_front();
}

namespace {

std::string Seconds(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ns) / 1e9);
  return buf;
}

}  // namespace

std::string HangReportText(const std::vector<ProcessHangState>& processes, int64_t now_ns) {
  std::string out;
  for (const ProcessHangState& p : processes) {
    out += "pid " + std::to_string(p.pid) + " (" + p.command + "): ";
    out += p.steps == 0 ? "no step yet"
                        : "step " + std::to_string(p.last_step) + " began " +
                              Seconds(now_ns - p.last_step_ns) + " ago";
    out += "\n";
    int64_t tid = -1;
    for (const OpenRangeNow& r : p.open) {
      if (r.tid != tid) {
        tid = r.tid;
        out += "  thread " + std::to_string(r.tid) +
               (r.thread.empty() ? "" : " (" + r.thread + ")") +
               ", open ranges, innermost first:\n";
      }
      out += "    " + r.kind + " " + r.name + ", for " + Seconds(now_ns - r.begin_ns) + "\n";
    }
    if (p.open.empty()) out += "  no range or operator open\n";
    int64_t sampled = -1;
    for (const StackSampleNow& x : p.samples) {
      if (x.tid != sampled) {
        sampled = x.tid;
        out += "  thread " + std::to_string(x.tid) + ", its last CPU samples (root first):\n";
      }
      out += "    " + Seconds(now_ns - x.ns) + " ago: " + x.stack + "\n";
    }
    if (!p.collectives.empty()) out += "  last collectives entered, oldest first:\n";
    for (const CollectiveEntered& c : p.collectives) {
      out += "    " + c.name + " seq " + std::to_string(c.seq) +
             (c.seq_recorded ? "" : " (counted)") + " on thread " + std::to_string(c.tid) +
             (c.open ? ", still open after " + Seconds(now_ns - c.begin_ns) : ", done") + "\n";
    }
  }
  return out;
}

std::string HangReportJson(const std::vector<ProcessHangState>& processes, int64_t now_ns) {
  std::string out = "{\"at_ns\": " + std::to_string(now_ns) + ", \"processes\": [";
  for (size_t i = 0; i < processes.size(); ++i) {
    const ProcessHangState& p = processes[i];
    out += i ? ", " : "";
    out += "{\"pid\": " + std::to_string(p.pid) + ", \"command\": ";
    AppendJsonString(&out, p.command);
    out += ", \"steps\": " + std::to_string(p.steps) +
           ", \"last_step\": " + std::to_string(p.last_step) +
           ", \"last_step_ns\": " + std::to_string(p.last_step_ns) + ", \"open\": [";
    for (size_t k = 0; k < p.open.size(); ++k) {
      const OpenRangeNow& r = p.open[k];
      out += k ? ", " : "";
      out += "{\"tid\": " + std::to_string(r.tid) + ", \"thread\": ";
      AppendJsonString(&out, r.thread);
      out += ", \"kind\": ";
      AppendJsonString(&out, r.kind);
      out += ", \"name\": ";
      AppendJsonString(&out, r.name);
      out += ", \"begin_ns\": " + std::to_string(r.begin_ns) + "}";
    }
    out += "], \"collectives\": [";
    for (size_t k = 0; k < p.collectives.size(); ++k) {
      const CollectiveEntered& c = p.collectives[k];
      out += k ? ", " : "";
      out += "{\"tid\": " + std::to_string(c.tid) + ", \"name\": ";
      AppendJsonString(&out, c.name);
      out += ", \"seq\": " + std::to_string(c.seq) +
             ", \"seq_recorded\": " + (c.seq_recorded ? "true" : "false") +
             ", \"begin_ns\": " + std::to_string(c.begin_ns) +
             ", \"open\": " + (c.open ? "true" : "false") + "}";
    }
    out += "], \"samples\": [";
    for (size_t k = 0; k < p.samples.size(); ++k) {
      const StackSampleNow& x = p.samples[k];
      out += k ? ", " : "";
      out += "{\"tid\": " + std::to_string(x.tid) + ", \"ns\": " + std::to_string(x.ns) +
             ", \"stack\": ";
      AppendJsonString(&out, x.stack);
      out += "}";
    }
    out += "]}";
  }
  out += "]}";
  return out;
}

}  // namespace profsh
