#include "engine/session/live_session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "engine/session/torch_fallback.h"
#include "engine/stream/stream_format.h"
#include "engine/util/json_text.h"

namespace profsh {

namespace {

// A stream is read and decoded this much at a time; a Poll stops after kPollBudget bytes or
// once kWindowsPerPoll windows are done: however far behind the host is (kept off the CPU, or
// steps far shorter than a poll's 20 ms), the windows it holds at once stay few. Decoding runs
// at tens of MB/s, so the budget slows no host that keeps up.
constexpr size_t kStreamReadPiece = 16 << 10;
constexpr size_t kPollBudget = 4 << 20;
constexpr size_t kWindowsPerPoll = 64;

}  // namespace

struct LiveSession::Stream {
  std::string path;
  int fd = -1;
  size_t consumed = 0;  // bytes decoded (whole blocks)
  size_t punched = 0;   // bytes given back to the file system
  std::unique_ptr<StreamDecoder> decoder;
  std::unique_ptr<char[]> buffer;  // buffer_size bytes, written before read
  size_t buffer_size = 0;
  bool finished = false;
};

// Each window becomes a Trace of its own, timed from the window's start.
class LiveSession::Sink final : public WindowSink {
 public:
  TraceBuilder& Open(const WindowInfo& info, int64_t* origin_ns) override {
    auto open = std::make_unique<OpenTrace>();
    open->trace = std::make_unique<Trace>();
    open->trace->origin_ns = info.begin_ns;
    open->trace->has_origin = true;
    open->builder = std::make_unique<TraceBuilder>(*open->trace);
    open->builder->SetFormat("profsh-session");
    *origin_ns = info.begin_ns;
    TraceBuilder& b = *open->builder;
    open_[Key(info)] = std::move(open);
    if (samples) samples->WindowOpened(info);
    return b;
  }

  void PythonCall(int64_t pid, int64_t tid, int64_t begin_ns, int64_t end_ns,
                  std::string_view name) override {
    if (samples) samples->PythonCall(pid, tid, begin_ns, end_ns, name);
  }

  void Sealed(const WindowInfo& info) override {
    auto it = open_.find(Key(info));
    if (it == open_.end()) return;
    if (samples) {
      // Handed over once its samples are in (HandOverReady).
      samples->WindowEnded(info);
      waiting_.push_back(Waiting{info, std::move(it->second)});
      open_.erase(it);
      return;
    }
    Complete(info, *it->second);
    open_.erase(it);
  }

  // The windows waiting for their samples that have them all now, in order.
  void HandOverReady() {
    size_t kept = 0;
    for (Waiting& w : waiting_) {
      if (samples->Ready(w.info)) {
        samples->Emit(w.info, *w.trace->builder, w.info.begin_ns);
        Complete(w.info, *w.trace);
      } else {
        waiting_[kept++] = std::move(w);
      }
    }
    waiting_.resize(kept);
  }

  LiveSamples* samples = nullptr;

 private:
  struct OpenTrace {
    std::unique_ptr<Trace> trace;
    std::unique_ptr<TraceBuilder> builder;
  };
  struct Waiting {
    WindowInfo info;
    std::unique_ptr<OpenTrace> trace;
  };

  void Complete(const WindowInfo& info, OpenTrace& o) {
    Trace& t = *o.trace;
    t.has_steps = info.has_steps;
    t.first_step = info.first_step;
    t.last_step = info.last_step;
    std::string meta = "{\"pid\": " + std::to_string(info.pid) +
                       ", \"window\": " + std::to_string(info.index) + ", \"reason\": ";
    AppendJsonString(&meta, info.reason);
    if (info.has_steps) {
      meta += ", \"steps\": [" + std::to_string(info.first_step) + ", " +
              std::to_string(info.last_step) + "]";
    }
    // As a whole run's: a window of a run with the cpu activity says so even without samples.
    if (samples && !samples->method().empty()) {
      meta += ", \"sampling\": ";
      AppendJsonString(&meta, samples->method());
    }
    if (info.gpu_launches_unreported)
      meta += ", \"gpu_launches_unreported\": " + std::to_string(info.gpu_launches_unreported);
    if (info.gpu_graph_launches_not_awaited) {
      meta += ", \"gpu_graph_launches_not_awaited\": " +
              std::to_string(info.gpu_graph_launches_not_awaited);
    }
    meta += ", ";
    meta += kMemoryByThreadMember;
    meta += "}";
    t.memory_by_thread = true;
    // The window's own GPU losses, in the summary's words.
    for (const SummaryCount& c : kSummaryCounts) {
      const uint64_t n = c.count == &SessionSummary::gpu_launches_unreported
                             ? info.gpu_launches_unreported
                         : c.count == &SessionSummary::gpu_graph_launches_not_awaited
                             ? info.gpu_graph_launches_not_awaited
                             : 0;
      if (n > 0) t.warnings.push_back(std::to_string(n) + " " + c.Warning(n));
    }
    o.builder->AddMetadata("profsh", meta);
    o.builder->Finish();
    t.source_path = "window " + std::to_string(info.index) + " of pid " + std::to_string(info.pid);
    done_.push_back(WindowTrace{std::move(o.trace), info, 0});
  }

 public:
  size_t done_count() const { return done_.size(); }
  std::vector<WindowTrace> TakeDone() {
    std::vector<WindowTrace> out;
    out.swap(done_);
    return out;
  }

 private:
  std::vector<Waiting> waiting_;
  static std::pair<int64_t, uint64_t> Key(const WindowInfo& i) { return {i.pid, i.index}; }
  std::map<std::pair<int64_t, uint64_t>, std::unique_ptr<OpenTrace>> open_;
  std::vector<WindowTrace> done_;
};

LiveSession::LiveSession(std::string folder, int64_t gpu_wait_ms)
    : folder_(std::move(folder)), gpu_wait_ms_(gpu_wait_ms), sink_(std::make_unique<Sink>()) {}

void LiveSession::SampleCpu() {
  samples_ = std::make_unique<LiveSamples>(folder_, summary_, warnings_);
  sink_->samples = samples_.get();
}

Status LiveSession::ReadSamples(bool finished) {
  if (!samples_) return Status::Ok();
  // Each pid's latest image says up to when its windows are known.
  auto known = [&](int64_t pid) -> std::optional<int64_t> {
    const Stream* latest = nullptr;
    for (const auto& [path, s] : streams_) {
      if (!s->decoder->has_process() || s->decoder->process().pid != pid) continue;
      if (!latest || s->decoder->process().exec_index > latest->decoder->process().exec_index)
        latest = s.get();
    }
    if (latest == nullptr) return std::nullopt;
    return latest->finished ? INT64_MAX : latest->decoder->WindowsKnownUntilNs();
  };
  Status st = samples_->Read(known, finished);
  if (!st.ok()) return st;
  sink_->HandOverReady();
  return Status::Ok();
}

LiveSession::~LiveSession() {
  for (auto& [path, s] : streams_) {
    if (s->fd >= 0) close(s->fd);
  }
}

Status LiveSession::Discover() {
  DIR* d = opendir(folder_.c_str());
  if (d == nullptr) return Error{folder_ + ": cannot read the session folder: " + strerror(errno)};
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() <= std::strlen(stream::kFileSuffix) || !name.ends_with(stream::kFileSuffix))
      continue;
    std::string path = folder_ + "/" + name;
    if (streams_.count(path)) continue;
    auto s = std::make_unique<Stream>();
    s->path = path;
    s->fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (s->fd < 0) continue;  // being created; next poll
    s->decoder = std::make_unique<StreamDecoder>(path, *sink_, summary_, warnings_);
    s->decoder->SetStreamIndex(static_cast<uint32_t>(streams_.size()));
    s->decoder->SetGpuWait(gpu_wait_ms_ * 1000000);
    streams_[path] = std::move(s);
  }
  closedir(d);
  return Status::Ok();
}

Status LiveSession::ReadStream(Stream& s, size_t budget, bool* more) {
  // What is written after the last whole block, decoded a piece at a time: a backlog (a host
  // kept off the CPU for a while) costs one piece of memory, not its whole size for the rest
  // of the run. A piece grows only for a block larger than it.
  if (s.buffer_size == 0) {
    s.buffer_size = kStreamReadPiece;
    s.buffer = std::make_unique_for_overwrite<char[]>(s.buffer_size);
  }
  *more = false;
  size_t read = 0;
  while (true) {
    if (read >= budget || sink_->done_count() >= kWindowsPerPoll) {
      *more = true;
      break;
    }
    size_t filled = 0;
    while (filled < s.buffer_size) {
      const ssize_t n = pread(s.fd, s.buffer.get() + filled, s.buffer_size - filled,
                              static_cast<off_t>(s.consumed + filled));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      filled += static_cast<size_t>(n);
    }
    if (filled == 0) break;
    auto used = s.decoder->Feed(std::string_view(s.buffer.get(), filled), s.consumed);
    if (!used.ok()) return Status(used.error());
    s.consumed += used.value();
    summary_.stream_bytes += used.value();
    read += filled;
    if (filled < s.buffer_size) break;  // the end of what is written so far
    if (used.value() == 0) {            // one block larger than the piece
      s.buffer_size *= 2;
      s.buffer = std::make_unique_for_overwrite<char[]>(s.buffer_size);
    }
  }
  // What is decoded is not needed on disk any more.
  size_t punch_to = s.consumed / 4096 * 4096;
  if (punch_to > s.punched && s.punched + (1 << 20) <= punch_to) {
    if (fallocate(s.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(s.punched),
                  static_cast<off_t>(punch_to - s.punched)) == 0) {
      s.punched = punch_to;
    }
  }
  return Status::Ok();
}

Result<std::vector<WindowTrace>> LiveSession::Poll() {
  Status st = Discover();
  if (!st.ok()) return Error{st.message()};
  behind_ = false;
  for (auto& [path, s] : streams_) {
    if (s->finished) continue;
    bool more = false;
    Status r = ReadStream(*s, kPollBudget, &more);
    if (!r.ok()) return Error{r.message()};
    if (more) {
      behind_ = true;
      continue;  // its end is not read yet
    }
    // An image that ended (exit, _exit, exec) writes nothing more: close its windows now.
    if (s->decoder->has_process() && s->decoder->process().ended) {
      s->decoder->Finish();
      s->finished = true;
      ++summary_.processes;
      close(s->fd);
      s->fd = -1;
    }
  }
  Status samples = ReadSamples(false);
  if (!samples.ok()) return Error{samples.message()};
  return StampDropped(sink_->TakeDone());
}

std::vector<WindowTrace> LiveSession::StampDropped(std::vector<WindowTrace> windows) const {
  const uint64_t dropped =
      summary_.dropped_ranges + summary_.dropped_events + summary_.events_without_slot;
  for (WindowTrace& w : windows) w.dropped_so_far = dropped;
  return windows;
}

std::vector<ProcessHangState> LiveSession::HangStates() {
  std::vector<ProcessHangState> out;
  for (auto& [path, s] : streams_) {
    if (s->finished || !s->decoder->has_process()) continue;
    out.push_back(s->decoder->HangState());
    // With cpu on: a few stacks per thread since its last step began (a hung thread that spins,
    // as NCCL's do, is sampled; one blocked off the CPU is not).
    if (samples_) {
      ProcessHangState& p = out.back();
      p.samples = samples_->LastSamples(p.pid, p.last_step_ns, kHangSamplesPerThread);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const ProcessHangState& a, const ProcessHangState& b) { return a.pid < b.pid; });
  return out;
}

Result<std::vector<WindowTrace>> LiveSession::Finish() {
  auto last = Poll();
  if (!last.ok()) return last.error();
  while (behind_) {
    auto more = Poll();
    if (!more.ok()) return more.error();
    for (WindowTrace& w : more.value()) last.value().push_back(std::move(w));
  }
  for (auto& [path, s] : streams_) {
    if (s->finished) continue;
    s->decoder->Finish();
    s->finished = true;
    ++summary_.processes;
    ++summary_.cut_streams;
  }
  // The sampler has stopped and every process has ended: the samples files are complete.
  Status samples = ReadSamples(true);
  if (!samples.ok()) return Error{samples.message()};
  std::vector<WindowTrace> out = std::move(last.value());
  for (WindowTrace& w : StampDropped(sink_->TakeDone())) out.push_back(std::move(w));
  summary_.operator_sources = OperatorSources(folder_);
  if (HasTorchTraces(folder_)) {
    warnings_.push_back(
        "torch.profiler recorded the operators (the fallback), and its trace is written when the "
        "process exits: windows handed over while the workload ran do not hold them (profsh run "
        "without a window output, or profsh.load of the kept session folder, merges them)");
  }
  return out;
}

}  // namespace profsh
