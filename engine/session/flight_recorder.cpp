#include "engine/session/flight_recorder.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "engine/session/hang_trace.h"
#include "engine/trace/trace_append.h"
#include "engine/util/json_text.h"

namespace profsh {

struct FlightRecorder::Kept {
  std::unique_ptr<Trace> trace;
  WindowInfo info;
  uint64_t bytes = 0;
};

struct FlightRecorder::Process {
  int64_t pid = 0;
  std::deque<Kept> ring;               // oldest first
  std::deque<StepSummary> history;     // the last options_.history summaries
  int64_t memory_level = 0;            // growth of every step so far
  int64_t dumped_through = INT64_MIN;  // the last step a dump asked for
};

namespace {

constexpr uint64_t kTrimEverySteps = 256;

// The "profsh" metadata of a dump: a window's members, the reason, and the steps it holds.
std::string DumpMetadata(const WindowInfo& info, const std::string& reason, int64_t asked_first,
                         int64_t asked_last, uint64_t steps, const std::string& extra) {
  std::string meta = "{\"pid\": " + std::to_string(info.pid) +
                     ", \"window\": " + std::to_string(info.index) + ", \"reason\": ";
  AppendJsonString(&meta, reason);
  meta += ", \"steps\": [" + std::to_string(info.first_step) + ", " +
          std::to_string(info.last_step) + "]";
  meta += ", \"flight_recorder\": {\"asked\": [" + std::to_string(asked_first) + ", " +
          std::to_string(asked_last) + "], \"steps_held\": " + std::to_string(steps) + "}, ";
  meta += extra;
  meta += kMemoryByThreadMember;
  meta += "}";
  return meta;
}

// Kept steps joined into one trace timed from the first one's start; process and thread names
// once each, every other event as it was.
std::unique_ptr<Trace> JoinSteps(const std::vector<const Trace*>& steps, int64_t origin_ns,
                                 const std::string& profsh_metadata) {
  auto joined = std::make_unique<Trace>();
  joined->origin_ns = origin_ns;
  joined->has_origin = true;
  joined->memory_by_thread = true;
  TraceBuilder builder(*joined);
  builder.SetFormat("profsh-session");
  std::set<std::string> named;  // "pid/tid/name" of the metadata events already copied
  std::set<std::string> warnings;
  for (const Trace* t : steps) {
    const int64_t shift = t->origin_ns - origin_ns;
    AppendEvents(*t, builder, [&](size_t i, int64_t* ts, Ident* pid, Ident* tid, bool*) {
      if (t->events.phase(i) == 'M') {
        const std::string key = t->FormatIdent(*pid) + "/" + t->FormatIdent(*tid) + "/" +
                                std::string(t->str(t->events.name(i)));
        return named.insert(key).second;
      }
      *ts += shift;
      return true;
    });
    for (const auto& [key, json] : t->metadata) {
      if (key == "profsh") continue;
      if (!joined->FindMetadata(key)) builder.AddMetadata(key, json);
    }
    for (const std::string& w : t->warnings) {
      if (warnings.insert(w).second) joined->warnings.push_back(w);
    }
  }
  builder.AddMetadata("profsh", profsh_metadata);
  builder.Finish();
  return joined;
}

}  // namespace

FlightRecorder::FlightRecorder(FlightRecorderOptions options) : options_(options) {}
FlightRecorder::~FlightRecorder() = default;

void FlightRecorder::AddTrigger(std::unique_ptr<StepTrigger> trigger) {
  triggers_.push_back(std::move(trigger));
  trigger_disabled_.push_back(false);
}

FlightRecorder::Process& FlightRecorder::ProcessOf(int64_t pid) {
  auto& p = processes_[pid];
  if (!p) {
    p = std::make_unique<Process>();
    p->pid = pid;
  }
  return *p;
}

bool FlightRecorder::Needed(const Process& p, int64_t step) const {
  for (const Pending& r : pending_) {
    if (r.pid == p.pid && step >= r.first && step <= r.last) return true;
  }
  return false;
}

void FlightRecorder::Evict(Process& p) {
  auto drop_front = [&] {
    stats_.bytes_kept -= p.ring.front().bytes;
    --stats_.steps_kept;
    ++stats_.steps_dropped;
    p.ring.pop_front();
  };
  // A step a pending dump asks for stays (the byte bound below still applies), and so do the
  // `before` steps a trigger at the next step asks for.
  const size_t at_least = static_cast<size_t>(std::max<int64_t>(options_.before, 1));
  while (p.ring.size() > at_least && !Needed(p, p.ring.front().info.first_step)) {
    const Kept& oldest = p.ring.front();
    const bool too_many = options_.steps > 0 && p.ring.size() > static_cast<size_t>(options_.steps);
    const bool too_old = options_.seconds > 0 && p.ring.back().info.end_ns - oldest.info.end_ns >=
                                                     options_.seconds * 1000000000;
    if (!too_many && !too_old) break;
    drop_front();
  }
}

void FlightRecorder::EvictForBytes() {
  // The oldest step of any process goes first, always keeping the newest one.
  while (stats_.bytes_kept > options_.max_bytes && stats_.steps_kept > 1) {
    Process* oldest = nullptr;
    for (auto& [pid, p] : processes_) {
      if (p->ring.empty()) continue;
      if (!oldest || p->ring.front().info.begin_ns < oldest->ring.front().info.begin_ns)
        oldest = p.get();
    }
    if (oldest == nullptr) break;
    stats_.bytes_kept -= oldest->ring.front().bytes;
    --stats_.steps_kept;
    ++stats_.steps_dropped;
    oldest->ring.pop_front();
  }
}

std::vector<FlightDump> FlightRecorder::AddStep(WindowTrace step, uint64_t dropped_so_far) {
  ++stats_.steps_seen;
  Process& p = ProcessOf(step.info.pid);
  StepSummary summary = SummarizeStep(*step.trace, step.info.pid, step.info.first_step,
                                      step.info.begin_ns, step.info.end_ns, p.memory_level);
  // The event model was built for the summary: the ring keeps the events alone, which is what
  // its byte bound counts.
  step.trace->derived.Clear();
  summary.dropped = dropped_so_far >= last_dropped_ ? dropped_so_far - last_dropped_ : 0;
  last_dropped_ = std::max(last_dropped_, dropped_so_far);
  p.memory_level = summary.memory_at_end();

  const StepHistory history = MakeStepHistory(p.history);
  for (size_t i = 0; i < triggers_.size(); ++i) {
    if (trigger_disabled_[i]) continue;
    auto verdict = triggers_[i]->Check(summary, history);
    if (!verdict.ok()) {
      trigger_disabled_[i] = true;
      ++stats_.trigger_errors;
      notices_.push_back("trigger '" + triggers_[i]->spec() + "' failed at step " +
                         std::to_string(summary.step) + " of pid " + std::to_string(p.pid) + ": " +
                         verdict.error().message + "; it is disabled, the run goes on");
      continue;
    }
    if (verdict.value()) {
      ++stats_.triggers_fired;
      RequestDump(p.pid, summary.step, *verdict.value());
    }
  }

  Kept kept;
  kept.bytes = step.trace->MemoryBytes();
  kept.trace = std::move(step.trace);
  kept.info = step.info;
  stats_.bytes_kept += kept.bytes;
  ++stats_.steps_kept;
  p.ring.push_back(std::move(kept));
  p.history.push_back(summary);
  while (p.history.size() > options_.history) p.history.pop_front();
  last_summary_ = std::make_unique<StepSummary>(std::move(summary));

  // Requests whose last step is in now.
  std::vector<FlightDump> out;
  const int64_t newest = p.ring.back().info.last_step;
  for (size_t i = 0; i < pending_.size();) {
    if (pending_[i].pid == p.pid && pending_[i].last <= newest) {
      Pending r = std::move(pending_[i]);
      pending_.erase(pending_.begin() + static_cast<ptrdiff_t>(i));
      for (FlightDump& d : DumpProcess(p, r.first, r.last, r.reason)) {
        d.requested_at_ns = r.requested_at_ns;
        out.push_back(std::move(d));
      }
    } else {
      ++i;
    }
  }
  Evict(p);
  EvictForBytes();
  // The decoded steps come and go by the thousand: what a burst of them took (a drain round that
  // came late holds many) goes back to the system now and then, not only the ring's bound.
  if (stats_.steps_seen % kTrimEverySteps == 0) malloc_trim(0);
  stats_.peak_steps_kept = std::max(stats_.peak_steps_kept, stats_.steps_kept);
  stats_.peak_bytes_kept = std::max(stats_.peak_bytes_kept, stats_.bytes_kept);
  return out;
}

void FlightRecorder::RequestDump(int64_t pid, int64_t step, const std::string& reason) {
  Process& p = ProcessOf(pid);
  for (Pending& r : pending_) {
    if (r.pid == pid && step >= r.first && step <= r.last) {
      ++stats_.triggers_merged;
      return;
    }
  }
  if (step <= p.dumped_through) {
    ++stats_.triggers_merged;  // inside a span already dumped
    return;
  }
  const int64_t first = std::max(step - options_.before, p.dumped_through + 1);
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  pending_.push_back(Pending{pid, step, first, step + options_.after, reason, now});
  p.dumped_through = step + options_.after;
}

std::vector<FlightDump> FlightRecorder::DumpProcess(Process& p, int64_t first, int64_t last,
                                                    const std::string& reason) {
  std::vector<const Kept*> kept;
  for (const Kept& k : p.ring) {
    if (k.info.last_step >= first && k.info.first_step <= last) kept.push_back(&k);
  }
  // The span it covers, as a dump of every process has it (DumpSpan).
  const std::string span = kept.empty()
                               ? ""
                               : "\"span\": [" + std::to_string(kept.front()->info.begin_ns) +
                                     ", " + std::to_string(kept.back()->info.end_ns) + "], ";
  return MakeDump(p.pid, kept, first, last, reason, span, nullptr);
}

std::vector<FlightDump> FlightRecorder::MakeDump(int64_t pid, const std::vector<const Kept*>& kept,
                                                 int64_t first, int64_t last,
                                                 const std::string& reason,
                                                 const std::string& extra_metadata,
                                                 std::unique_ptr<Trace> extra) {
  std::vector<const Trace*> steps;
  WindowInfo info;
  info.pid = pid;
  info.has_steps = !kept.empty();
  info.reason = reason;
  for (const Kept* k : kept) {
    if (steps.empty()) {
      info.first_step = k->info.first_step;
      info.begin_ns = k->info.begin_ns;
    }
    info.last_step = k->info.last_step;
    info.end_ns = k->info.end_ns;
    info.gpu_launches_unreported += k->info.gpu_launches_unreported;
    info.gpu_graph_launches_not_awaited += k->info.gpu_graph_launches_not_awaited;
    steps.push_back(k->trace.get());
  }
  if (extra) {
    if (steps.empty()) info.begin_ns = info.end_ns = extra->origin_ns;
    steps.push_back(extra.get());
  }
  if (steps.empty()) return {};
  info.index = stats_.dumps++;
  FlightDump d;
  d.reason = reason;
  d.first_step = first;
  d.last_step = last;
  d.steps = kept.size();
  std::unique_ptr<Trace> trace = JoinSteps(
      steps, info.begin_ns, DumpMetadata(info, reason, first, last, d.steps, extra_metadata));
  trace->has_steps = info.has_steps;
  trace->first_step = info.first_step;
  trace->last_step = info.last_step;
  trace->source_path =
      "flight recorder dump " + std::to_string(info.index) + " of pid " + std::to_string(info.pid);
  d.window = WindowTrace{std::move(trace), info, 0};
  std::vector<FlightDump> out;
  out.push_back(std::move(d));
  return out;
}

std::optional<std::pair<int64_t, int64_t>> FlightRecorder::KeptSpan(int64_t pid) const {
  std::optional<std::pair<int64_t, int64_t>> span;
  for (const auto& [id, p] : processes_) {
    if ((pid != 0 && id != pid) || p->ring.empty()) continue;
    const int64_t begin = p->ring.front().info.begin_ns, end = p->ring.back().info.end_ns;
    if (!span) {
      span = std::make_pair(begin, end);
    } else {
      span->first = std::min(span->first, begin);
      span->second = std::max(span->second, end);
    }
  }
  return span;
}

std::vector<FlightDump> FlightRecorder::DumpSpan(int64_t begin_ns, int64_t end_ns,
                                                 const std::string& reason, const HangFinding* hang,
                                                 int64_t except_pid) {
  // Every process with kept steps, and with a hang every process running then.
  std::set<int64_t> pids;
  for (const auto& [id, p] : processes_) pids.insert(id);
  if (hang) {
    for (const ProcessHangState& s : hang->processes) pids.insert(s.pid);
  }
  std::string span =
      "\"span\": [" + std::to_string(begin_ns) + ", " + std::to_string(end_ns) + "], ";
  if (hang) span += "\"hang\": " + HangReportJson(hang->processes, hang->at_ns) + ", ";
  std::vector<FlightDump> out;
  for (int64_t pid : pids) {
    if (pid == except_pid) continue;
    std::vector<const Kept*> kept;
    if (auto it = processes_.find(pid); it != processes_.end()) {
      for (const Kept& k : it->second->ring) {
        if (k.info.end_ns >= begin_ns && k.info.begin_ns <= end_ns) kept.push_back(&k);
      }
    }
    std::unique_ptr<Trace> ranges;
    if (hang) {
      int64_t origin = kept.empty() ? hang->at_ns : kept.front()->info.begin_ns;
      for (const ProcessHangState& s : hang->processes) {
        if (s.pid != pid) continue;
        for (const OpenRangeNow& r : s.open) origin = std::min(origin, r.begin_ns);
      }
      ranges = HangTrace(*hang, pid, origin);
      if (ranges->events.size() == 0) ranges.reset();
    }
    const int64_t first = kept.empty() ? 0 : kept.front()->info.first_step;
    const int64_t last = kept.empty() ? 0 : kept.back()->info.last_step;
    for (FlightDump& d : MakeDump(pid, kept, first, last, reason, span, std::move(ranges)))
      out.push_back(std::move(d));
  }
  return out;
}

std::vector<FlightDump> FlightRecorder::Dump(int64_t pid, int64_t first_step, int64_t last_step,
                                             const std::string& reason) {
  std::vector<FlightDump> out;
  for (auto& [id, p] : processes_) {
    if (pid != 0 && id != pid) continue;
    for (FlightDump& d : DumpProcess(*p, first_step, last_step, reason))
      out.push_back(std::move(d));
  }
  return out;
}

std::vector<FlightDump> FlightRecorder::Finish() {
  std::vector<FlightDump> out;
  std::vector<Pending> pending;
  pending.swap(pending_);
  for (const Pending& r : pending) {
    for (FlightDump& d : DumpProcess(ProcessOf(r.pid), r.first, r.last, r.reason)) {
      d.requested_at_ns = r.requested_at_ns;
      out.push_back(std::move(d));
    }
  }
  return out;
}

std::vector<std::string> FlightRecorder::TakeNotices() {
  std::vector<std::string> out;
  out.swap(notices_);
  return out;
}

}  // namespace profsh
