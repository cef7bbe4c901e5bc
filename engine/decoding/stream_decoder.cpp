#include "engine/decoding/stream_decoder.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <type_traits>
#include <unordered_map>

#include "engine/decoding/gpu_emitter.h"
#include "engine/decoding/gpu_launch_waits.h"
#include "engine/decoding/range_matcher.h"
#include "engine/decoding/stream_clock.h"
#include "engine/decoding/stream_names.h"
#include "engine/trace/collective_names.h"
#include "engine/trace/trace.h"
#include "engine/util/saturating.h"
#include "engine/util/utf8.h"

namespace profsh {

namespace st = stream;

namespace {

constexpr size_t kSealedWindowsKept = 16;
// torch's autograd engine wraps each backward node in an "evaluate_function" range that carries
// no sequence number itself; torch's profiler gives it the node's.
constexpr std::string_view kEvaluateFunction = "autograd::engine::evaluate_function: ";
constexpr uint8_t kBackwardScope = 1;  // at::RecordScope::BACKWARD_FUNCTION

// An event as decoded, with the thread its block belongs to.
struct ThreadEvent {
  st::StreamEvent e;
  int64_t tid;
};

// Events wait a few drain rounds; a round that came late (a drain thread or a host kept off the
// CPU) makes the wait list grow far beyond that. Its capacity is given back once the list is
// short again, so that a long live session's memory follows what waits now, not the worst
// moment so far (a vector keeps its capacity).
void GiveBackSpareCapacity(std::vector<ThreadEvent>& events) {
  constexpr size_t kKeptCapacity = (256 << 10) / sizeof(ThreadEvent);
  if (events.capacity() > kKeptCapacity && events.size() < events.capacity() / 4)
    events.shrink_to_fit();
}

}  // namespace

struct StreamDecoder::Impl {
  Impl(StreamDecoder& owner, WindowSink& sink, SessionSummary& summary,
       std::vector<std::string>& warnings)
      : owner(owner),
        sink(sink),
        summary(summary),
        warnings(warnings),
        windows(clock),
        emitter(sink, clock, names),
        gpu(emitter, clock, names) {}

  StreamDecoder& owner;
  WindowSink& sink;
  SessionSummary& summary;
  std::vector<std::string>& warnings;

  StreamProcess process;
  bool has_process = false;
  bool memory_left_out_counted = false;
  bool last_image = true;
  bool windowed = false;   // a schedule, capture ranges or on-demand requests cut windows
  bool preloaded = false;  // every boundary is known: events are processed as they come
  TickClock clock;
  std::vector<uint64_t> round_ends;  // ticks of each kClock block, in order
  StreamNames names;
  WindowTracker windows;
  RangeMatcher matcher;
  KinetoEmitter emitter;
  GpuEmitter gpu;
  bool cuda = false;                       // the cuda activity is on (or GPU records came)
  std::vector<st::GpuRecord> pending_gpu;  // waiting like `pending`
  std::vector<int64_t> slot_tid;           // thread slot -> tid
  std::set<int64_t> threads;
  std::unordered_map<int64_t, std::string> thread_names;
  std::vector<ThreadEvent> pending;  // waiting until no earlier boundary can arrive
  uint64_t last_ticks = 0;
  uint64_t paused_at = UINT64_MAX;
  uint64_t python_domain = UINT64_MAX;  // the torch plugin's Python calls (kPythonCallsDomain)
  // Drop counts are cumulative per slot occupant; a new occupant starts from zero.
  std::map<uint64_t, std::array<uint64_t, 3>> drops_by_slot;
  uint64_t slot_drops[3] = {};
  st::ProcessDropsBlock process_drops;
  st::NameCountsBlock name_counts;  // the last one: cumulative
  // Allocations and frees arrive thread by thread; the running total (and so the peak) needs
  // them in time order, which is known for the ones older than the release watermark.
  std::vector<ThreadEvent> memory_events;
  int64_t memory_total = 0, memory_peak = 0;
  // A window ends on the CPU before the GPU work launched in it has reported: it is handed over
  // once every launch of it has its device record, or `gpu_wait_ns` of stream time after its end.
  GpuLaunchWaits launch_waits;
  int64_t gpu_wait_ns = kDefaultGpuWaitMs * 1000000;
  // For a watchdog's hang report (hang_watch.h): the last collectives entered and the last step.
  CollectiveLog collectives;
  std::vector<uint8_t> collective_name;  // per dense string id: 0 not looked at, 1 no, 2 yes
  int64_t last_step = -1;
  uint64_t last_step_ticks = 0;
  uint64_t steps_seen = 0;

  bool IsCollective(uint64_t name) {
    if (name >= StreamNames::kDenseIds)
      return CollectiveNameKindOf(names.Text(name)) != CollectiveNameKind::kNone;
    if (name >= collective_name.size()) collective_name.resize(name + 1, 0);
    uint8_t& known = collective_name[name];
    if (known == 0)
      known = CollectiveNameKindOf(names.Text(name)) != CollectiveNameKind::kNone ? 2 : 1;
    return known == 2;
  }

  std::string Where(size_t offset) const {
    return owner.path() + ": block at byte " + std::to_string(offset);
  }
  int WindowAt(uint64_t ticks) { return windows.At(ticks, &summary.late_events); }
  void Opened(std::optional<size_t> window) {
    if (window) emitter.Open(*window, windows[*window].info);
  }
  void OpenWholeRunIfNeeded() {
    if (!windowed && windows.empty()) Opened(windows.OpenWholeRun());
  }

  void EmitLevel(size_t window, const OpenLevel& level, int64_t tid, uint64_t end_ticks,
                 uint8_t flags) {
    if (level.begin.kind == st::kPush && level.begin.domain == python_domain) {
      // The Python frames of the thread's samples, not a range of the trace.
      sink.PythonCall(process.pid, tid, clock.ToNs(level.begin.ticks), clock.ToNs(end_ticks),
                      names.Text(level.begin.name));
      return;
    }
    emitter.Level(window, level, tid, end_ticks, flags);
    if (cuda)
      gpu.Range(window, tid, level.begin.ticks, end_ticks, static_cast<uint32_t>(level.begin.name));
    ++summary.ranges;
    if (level.begin.kind == st::kOpBegin) ++summary.operators;
  }

  // Closes the levels of `tid` still open: at its exit, or at the stream's end.
  void CloseThread(int64_t tid, uint64_t ticks, bool thread_exit) {
    for (const OpenLevel& level : matcher.TakeThread(tid)) {
      if (level.window < 0 || level.emitted) continue;
      const Window& w = windows[level.window];
      EmitLevel(level.window, level, tid, std::min(ticks, w.end_ticks), kFlagUnterminated);
      ++(thread_exit ? summary.open_at_thread_exit : summary.open_at_end);
    }
  }

  // Whether a window's launches are waited for: windows that end while the process runs.
  bool WaitsForGpu() const { return cuda && windowed; }

  // A window is complete: cut what is still open at its end, then hand it over. `final`: the
  // stream has ended (nothing more can report).
  void Seal(size_t index, bool final) {
    Window& w = windows[index];
    if (w.sealed) return;
    if (WaitsForGpu()) {
      launch_waits.Classify(names);
      const GpuLaunchWaits::Released r = launch_waits.Release(w.begin_ticks, w.end_ticks);
      w.info.gpu_launches_unreported = r.unreported;
      // Graph launches matter only where the window did not wait for the stream's end.
      w.info.gpu_graph_launches_not_awaited = final ? 0 : r.graphs;
      summary.gpu_launches_unreported += r.unreported;
      summary.gpu_graph_launches_not_awaited += w.info.gpu_graph_launches_not_awaited;
    }
    const uint64_t end = w.end_ticks == UINT64_MAX ? last_ticks : w.end_ticks;
    const int window = static_cast<int>(index);
    matcher.ForEachOpen([&](int64_t tid, OpenLevel& level) {
      if (level.window != window || level.emitted) return;
      // Cut at the window's end: its pop will come later and be matched silently.
      EmitLevel(index, level, tid, end, windowed ? 0 : kFlagUnterminated);
      if (!windowed) ++summary.open_at_end;
      level.emitted = true;
    });
    const uint64_t cut = matcher.CloseWindow(window, end);
    if (!windowed) summary.open_at_end += cut;
    if (paused_at != UINT64_MAX && WindowAt(paused_at) == window)
      emitter.Paused(index, paused_at, end);
    std::vector<MatchedRange> ranges = matcher.TakeMatched(window);
    summary.ranges += ranges.size();
    if (w.end_ticks == UINT64_MAX) w.info.end_ns = clock.ToNs(last_ticks);
    w.sealed = true;
    if (cuda) {
      gpu.Seal(index, Names().rank);
      gpu.Forget(window);
    }
    emitter.Seal(index, w.info, std::move(ranges), Names());
  }

  ProcessNames Names() const {
    std::string_view rank;
    for (const auto& [k, v] : process.env) {
      if (k == "RANK") rank = v;
    }
    return ProcessNames{process.cmdline.empty() ? process.exe : process.cmdline, rank, last_image,
                        threads, thread_names};
  }

  void Process(const ThreadEvent& te) {
    const st::StreamEvent& e = te.e;
    const int64_t tid = te.tid;
    last_ticks = std::max(last_ticks, e.ticks);
    switch (e.kind) {
      case st::kPush:
      case st::kTaskBegin:
      case st::kOpBegin:
        matcher.Push(tid, e.domain, e, WindowAt(e.ticks));
        if (e.domain != python_domain && IsCollective(e.name))
          collectives.Entered(tid, names.Text(e.name), e);
        break;
      case st::kPop:
      case st::kTaskEnd: {
        const auto level = matcher.Pop(tid, e.domain);
        if (!level) {
          if (!windowed || WindowAt(e.ticks) >= 0) ++summary.unmatched_pops;
          break;
        }
        const st::OpFields& op = level->begin.op;
        if (level->begin.kind == st::kOpBegin && op.scope == kBackwardScope && op.sequence >= 0) {
          OpenLevel* parent = matcher.Top(tid, e.domain);
          if (parent && parent->begin.kind == st::kOpBegin && parent->begin.op.sequence < 0 &&
              names.Text(parent->begin.name).starts_with(kEvaluateFunction)) {
            parent->begin.op.sequence = op.sequence;
            parent->begin.op.forward_thread = op.forward_thread;
          }
        }
        if (level->window >= 0 && !level->emitted)
          EmitLevel(level->window, *level, tid, e.ticks, 0);
        break;
      }
      case st::kMemory:
        memory_events.push_back(te);  // emitted in time order by AccumulateMemory
        break;
      case st::kMark:
        if (int w = WindowAt(e.ticks); w >= 0) {
          emitter.Mark(w, e, tid);
          ++summary.marks;
        }
        break;
      case st::kRangeStart:
        matcher.Start(e, WindowAt(e.ticks));
        break;
      case st::kRangeEnd:
        matcher.End(e.range_id, e.ticks);
        break;
      case st::kFrameBegin:
        matcher.FrameBegin(e.domain, e.frame_id, e.ticks);
        break;
      case st::kFrameEnd: {
        const auto begin = matcher.FrameEnd(e.domain, e.frame_id);
        if (!begin) {
          if (!windowed || WindowAt(e.ticks) >= 0) ++summary.unmatched_pops;
          break;
        }
        if (int w = WindowAt(*begin); w >= 0) {
          emitter.Frame(w, e.domain, *begin, e.ticks);
          ++summary.ranges;
        }
        break;
      }
      case st::kCounterSet:
        if (int w = WindowAt(e.ticks); w >= 0) {
          emitter.Counter(w, e, tid);
          ++summary.counter_values;
        }
        break;
      case st::kPause:
        paused_at = e.ticks;
        break;
      case st::kResume:
        if (paused_at != UINT64_MAX) {
          if (int w = WindowAt(paused_at); w >= 0) emitter.Paused(w, paused_at, e.ticks);
          paused_at = UINT64_MAX;
        }
        break;
      case st::kThreadEnd:
        CloseThread(tid, e.ticks, true);
        break;
      default:
        break;
    }
  }

  void AccumulateMemory(uint64_t watermark) {
    auto older = [watermark](const ThreadEvent& te) { return te.e.ticks <= watermark; };
    auto split = std::stable_partition(memory_events.begin(), memory_events.end(), older);
    std::stable_sort(memory_events.begin(), split, [](const ThreadEvent& a, const ThreadEvent& b) {
      return a.e.ticks < b.e.ticks;
    });
    for (auto it = memory_events.begin(); it != split; ++it) {
      memory_total = SaturatingAdd(memory_total, it->e.bytes);  // hostile sizes overflowed it
      memory_peak = std::max(memory_peak, memory_total);
      if (int w = WindowAt(it->e.ticks); w >= 0) {
        emitter.Memory(w, it->e, it->tid, memory_total);
        ++summary.memory_events;
      }
    }
    memory_events.erase(memory_events.begin(), split);
    GiveBackSpareCapacity(memory_events);
  }

  // Events old enough that no earlier step boundary can still arrive: two drain rounds back.
  void Release(bool everything) {
    const uint64_t watermark = everything               ? UINT64_MAX
                               : round_ends.size() >= 3 ? round_ends[round_ends.size() - 3]
                                                        : 0;
    if (!pending.empty()) {
      size_t keep = 0;
      for (const ThreadEvent& te : pending) {
        if (te.e.ticks <= watermark) {
          Process(te);
        } else {
          pending[keep++] = te;
        }
      }
      pending.resize(keep);
      GiveBackSpareCapacity(pending);
    }
    AccumulateMemory(watermark);
    ReleaseGpu(watermark);
    if (watermark != 0)
      last_ticks =
          std::max(last_ticks, std::min(watermark, round_ends.empty() ? 0 : round_ends.back()));
    // Windows that ended before the watermark are complete on the CPU; with the cuda activity,
    // once the GPU work launched in them has reported too. In order: a window waiting for its
    // GPU work holds the later ones back.
    if (WaitsForGpu()) launch_waits.Classify(names);
    for (size_t i = windows.begin(); i < windows.end(); ++i) {
      const Window& w = windows[i];
      if (w.sealed) continue;
      if (w.end_ticks == UINT64_MAX || w.end_ticks > watermark) break;
      if (!everything && WaitsForGpu() && launch_waits.Waiting(w.begin_ticks, w.end_ticks) > 0 &&
          !GpuWaitOver(w))
        break;
      Seal(i, everything);
    }
    if (WaitsForGpu() && !everything) {
      // No window that may still wait begins before the first unsealed one, nor before the
      // watermark (no boundary older than it can still come).
      uint64_t waiting_from = watermark;
      for (size_t i = windows.begin(); i < windows.end(); ++i) {
        if (!windows[i].sealed) {
          waiting_from = std::min(waiting_from, windows[i].begin_ticks);
          break;
        }
      }
      launch_waits.Forget(waiting_from);
    }
    windows.ForgetSealed(kSealedWindowsKept);
  }

  // The wait for a window's GPU work is bounded in stream time: the process's latest drain round
  // is `gpu_wait_ns` past the window's end.
  bool GpuWaitOver(const Window& w) const {
    if (round_ends.empty()) return false;
    return clock.ToNs(round_ends.back()) - clock.ToNs(w.end_ticks) >= gpu_wait_ns;
  }

  // The launch call a record names through its correlation, when it has one and it is known.
  const GpuLaunch* LaunchOf(const st::GpuRecord& r) const {
    const GpuLaunch* launch = nullptr;
    st::VisitGpuRecord(r, [&](const auto& rec) {
      if constexpr (st::CorrelatedGpuRecord<std::decay_t<decltype(rec)>>)
        launch = gpu.FindLaunch(rec.correlation);
    });
    return launch;
  }

  // When a GPU record happened for the windows: its launch's time when known and earlier, else
  // its own; descriptions and counts at once (0).
  uint64_t GpuTicks(const st::GpuRecord& r) const {
    uint64_t at = GpuOwnTicks(r);
    if (r.kind == st::kGpuApi) return at;  // a call is its own launch
    if (const GpuLaunch* l = LaunchOf(r)) at = std::min(at, l->begin);
    return at;
  }

  void RegisterLaunch(const st::GpuApi& call, int window) {
    gpu.Launch(call.correlation,
               GpuLaunch{static_cast<int64_t>(call.tid), call.start, call.end, window,
                         static_cast<uint32_t>(call.name), static_cast<uint8_t>(call.api)});
  }

  // Launches first (a copy's record may come before its call's), then the device work.
  void ProcessGpu(std::vector<st::GpuRecord>& batch) {
    for (const st::GpuRecord& r : batch) {
      st::VisitGpuRecord(r, [&](const auto& rec) {
        using Record = std::decay_t<decltype(rec)>;
        if constexpr (std::is_same_v<Record, st::GpuApi>) {
          if (!gpu.FindLaunch(rec.correlation)) RegisterLaunch(rec, WindowAt(rec.start));
        } else if constexpr (std::is_same_v<Record, st::GpuDevice>) {
          gpu.Device(rec);
        } else if constexpr (std::is_same_v<Record, st::GpuContext>) {
          gpu.Context(rec);
        } else if constexpr (std::is_same_v<Record, st::GpuCudaEvent>) {
          gpu.CudaEventRecorded(rec);  // before the batch's syncs, which may wait for it
        } else if constexpr (std::is_same_v<Record, st::GpuDrops>) {
          gpu.counts.cupti_dropped = rec.cupti_dropped;
          gpu.counts.buffers_refused = rec.buffers_refused;
          gpu.counts.kinds_ignored = rec.kinds_ignored;
          gpu.counts.untimed = rec.untimed;
          gpu.counts.unwritten = rec.unwritten;
        }
      });
    }
    for (const st::GpuRecord& r : batch) {
      if (r.kind == st::kGpuDevice || r.kind == st::kGpuContext || r.kind == st::kGpuDrops ||
          r.kind == st::kGpuCudaEvent)
        continue;  // descriptions, counts and event records, taken above
      const GpuLaunch* launch = LaunchOf(r);
      const int window = launch ? launch->window : WindowAt(GpuOwnTicks(r));
      if (window >= 0) gpu.Record(static_cast<size_t>(window), r, launch);
    }
  }

  // A record's own time (a span's start, a memory operation's time); 0 for descriptions and
  // counts.
  static uint64_t GpuOwnTicks(const st::GpuRecord& r) {
    uint64_t at = 0;
    st::VisitGpuRecord(r, [&](const auto& rec) {
      using Record = std::decay_t<decltype(rec)>;
      if constexpr (std::is_same_v<Record, st::GpuMemory>) {
        at = rec.time;
      } else if constexpr (st::SpanGpuRecord<Record>) {
        at = rec.start;
      }
    });
    return at;
  }

  void ReleaseGpu(uint64_t watermark) {
    if (pending_gpu.empty()) return;
    // The launches released now, before the device work is looked at: work is released by its
    // launch's time (GpuTicks), with its launch, into the window that may be sealed next.
    for (const st::GpuRecord& r : pending_gpu) {
      if (r.kind != st::kGpuApi) continue;
      const auto call = st::GpuApi::From(r);
      if (call.start <= watermark && !gpu.FindLaunch(call.correlation))
        RegisterLaunch(call, WindowAt(call.start));
    }
    std::vector<st::GpuRecord> ready;
    size_t keep = 0;
    for (const st::GpuRecord& r : pending_gpu) {
      if (GpuTicks(r) <= watermark) {
        ready.push_back(r);
      } else {
        pending_gpu[keep++] = r;
      }
    }
    pending_gpu.resize(keep);
    ProcessGpu(ready);
  }

  Status DecodeGpu(const st::RawBlock& b);
  void PreloadLaunches(const st::RawBlock& b);
  Status DecodeEvents(const st::RawBlock& b);
  Status HandleBlock(const st::RawBlock& b);
  Status Boundary(const st::RawBlock& b);
  Status ReadProcess(const st::RawBlock& b);
};

namespace {

Status ReadStreamProcess(const std::string& path, const st::RawBlock& b, StreamProcess* process) {
  st::Cursor c(b.payload);
  st::ProcessBlock block;
  process->env.clear();
  const bool ok = block.Decode(c, [&](const st::EnvVar& v) {
    process->env.emplace_back(ValidUtf8(v.key), ValidUtf8(v.value));
  });
  if (!ok)
    return Error{path + ": block at byte " + std::to_string(b.offset) +
                 ": malformed process block"};
  if (block.clock_kind != st::kClockTsc && block.clock_kind != st::kClockMonotonic)
    return Error{path + ": unknown clock kind " + std::to_string(block.clock_kind)};
  process->pid = block.pid;
  process->ppid = block.ppid;
  process->start_ns = TickClock::ClampNs(block.start_ns);
  process->exec_index = block.exec_index;
  process->clock_kind = block.clock_kind;
  process->cmdline = ValidUtf8(block.command_line);
  std::replace(process->cmdline.begin(), process->cmdline.end(), '\0', ' ');
  process->exe = ValidUtf8(block.executable);
  process->host = ValidUtf8(block.hostname);
  return Status::Ok();
}

// How a stream's image ended, from its end, exec and exec-failed blocks.
void ReadEnd(const st::RawBlock& b, StreamProcess* process) {
  st::Cursor c(b.payload);
  if (b.type == st::kEnd) {
    st::EndBlock end;
    end.Decode(c);
    process->ended = true;
    process->end_reason = end.reason;
  } else if (b.type == st::kExec) {
    st::ExecBlock exec;
    exec.Decode(c);
    process->ended = true;
    process->end_reason = st::kEndExec;
    process->exec_path = ValidUtf8(exec.path);
  } else if (b.type == st::kExecFailed) {
    process->ended = false;
    process->end_reason = 0;
  }
}

}  // namespace

Status StreamDecoder::Impl::ReadProcess(const st::RawBlock& b) {
  Status s = ReadStreamProcess(owner.path(), b, &process);
  if (!s.ok()) return s;
  windows.SetProcess(process.pid, process.start_ns);
  emitter.SetPid(process.pid);
  gpu.SetPid(process.pid);
  has_process = true;
  return Status::Ok();
}

Status StreamDecoder::Impl::DecodeEvents(const st::RawBlock& b) {
  st::Cursor c(b.payload);
  st::EventsHeader header;
  if (!header.Decode(c)) return Error{Where(b.offset) + ": malformed events block"};
  const int64_t tid = header.slot < slot_tid.size() ? slot_tid[header.slot] : -1;
  if (tid < 0)
    return Error{Where(b.offset) + ": events of thread slot " + std::to_string(header.slot) +
                 " before its thread block"};
  uint64_t ticks = header.first_ticks;
  for (uint32_t i = 0; i < header.count; ++i) {
    ThreadEvent te{{}, tid};
    switch (st::DecodeEvent(c, &ticks, &te.e)) {
      case st::EventStatus::kOk:
        break;
      case st::EventStatus::kUnknownKind:
        return Error{Where(b.offset) + ": unknown event kind " + std::to_string(te.e.kind)};
      case st::EventStatus::kMalformed:
        return Error{Where(b.offset) + ": malformed event " + std::to_string(i) + " of " +
                     std::to_string(header.count)};
    }
    if (preloaded) {
      Process(te);
    } else {
      pending.push_back(te);
    }
  }
  return Status::Ok();
}

// Whole-file loading: the launch calls of every GPU block, registered before any device record
// is processed (device records are processed as they are decoded, and CUPTI hands its buffers
// back in any order: a kernel's record may come a block before its call's). Malformed blocks
// are left to DecodeGpu, which says where.
void StreamDecoder::Impl::PreloadLaunches(const st::RawBlock& b) {
  st::Cursor c(b.payload);
  const uint32_t count = c.Fixed<uint32_t>();
  if (!c.ok) return;
  cuda = true;
  uint64_t late = 0;  // counted when the records are processed
  for (uint32_t i = 0; i < count; ++i) {
    st::GpuRecord r;
    if (!st::DecodeGpuRecord(c, &r)) return;
    if (r.kind != st::kGpuApi) continue;
    const auto call = st::GpuApi::From(r);
    RegisterLaunch(call, windows.At(call.start, &late));
  }
}

Status StreamDecoder::Impl::DecodeGpu(const st::RawBlock& b) {
  st::Cursor c(b.payload);
  const uint32_t count = c.Fixed<uint32_t>();
  if (!c.ok) return Error{Where(b.offset) + ": malformed GPU activity block"};
  cuda = true;
  std::vector<st::GpuRecord> batch;
  for (uint32_t i = 0; i < count; ++i) {
    st::GpuRecord r;
    if (!st::DecodeGpuRecord(c, &r))
      return Error{Where(b.offset) + ": malformed GPU record " + std::to_string(i) + " of " +
                   std::to_string(count)};
    // The latest end the windows have seen (CUPTI's own overheads do not move it).
    st::VisitGpuRecord(r, [&](const auto& rec) {
      using Record = std::decay_t<decltype(rec)>;
      if constexpr (st::SpanGpuRecord<Record> && !std::is_same_v<Record, st::GpuOverhead>)
        last_ticks = std::max(last_ticks, rec.end);
    });
    if (windowed) launch_waits.Observe(r);
    batch.push_back(r);
  }
  if (preloaded) {
    ProcessGpu(batch);
  } else {
    pending_gpu.insert(pending_gpu.end(), batch.begin(), batch.end());
  }
  return Status::Ok();
}

Status StreamDecoder::Impl::HandleBlock(const st::RawBlock& b) {
  st::Cursor c(b.payload);
  auto malformed = [&](const char* what) {
    return Error{Where(b.offset) + ": malformed " + what + " block"};
  };
  switch (b.type) {
    case st::kProcess:
      if (!has_process) return ReadProcess(b);
      break;
    case st::kConfig: {
      st::ConfigBlock config;
      if (!config.Decode(c)) return malformed("configuration");
      windowed = config.windowed();
      cuda = cuda || (config.flags & st::kConfigCuda) != 0;
      // Preload reads the configuration before Feed does: the image counts once.
      if ((config.flags & st::kConfigMemoryLeftOut) && !memory_left_out_counted) {
        memory_left_out_counted = true;
        ++summary.memory_processes_left_out;
        const size_t slash = process.exe.rfind('/');
        summary.memory_left_out_programs.push_back(
            slash == std::string::npos ? process.exe : process.exe.substr(slash + 1));
      }
      break;
    }
    case st::kClock: {
      st::ClockBlock clock_block;
      if (!clock_block.Decode(c)) return malformed("clock");
      clock.Observe(clock_block, process.clock_kind);
      round_ends.push_back(clock_block.ticks);
      // The watermark needs the last three; a live session's rounds never end.
      if (round_ends.size() > 64) round_ends.erase(round_ends.begin(), round_ends.end() - 3);
      OpenWholeRunIfNeeded();
      if (!preloaded) Release(false);
      break;
    }
    case st::kString: {
      st::StringBlock s;
      if (!s.Decode(c)) return malformed("string");
      names.DefineString(s.id, ValidUtf8(s.text));
      break;
    }
    case st::kThread: {
      st::ThreadBlock t;
      if (!t.Decode(c)) return malformed("thread");
      if (t.slot >= slot_tid.size()) slot_tid.resize(t.slot + 1, -1);
      if (slot_tid[t.slot] != t.tid) drops_by_slot.erase(t.slot);  // a new occupant
      slot_tid[t.slot] = t.tid;
      threads.insert(t.tid);
      if (!t.name.empty()) thread_names[t.tid] = ValidUtf8(t.name);
      break;
    }
    case st::kDomain: {
      st::DomainBlock d;
      if (!d.Decode(c)) return malformed("domain");
      names.domains[d.id] = ValidUtf8(d.name);
      if (d.name == st::kPythonCallsDomain) python_domain = d.id;
      break;
    }
    case st::kCategory: {
      st::CategoryBlock cat;
      if (!cat.Decode(c)) return malformed("category");
      names.categories[{cat.domain, cat.id}] = ValidUtf8(cat.name);
      break;
    }
    case st::kCounter: {
      st::CounterBlock counter;
      if (!counter.Decode(c)) return malformed("counter");
      std::string full = ValidUtf8(counter.name);
      if (counter.domain != 0) full = names.DomainName(counter.domain) + "/" + full;
      names.counters[counter.id] = StreamNames::Counter{std::move(full), counter.value_type};
      break;
    }
    case st::kOsThreadName: {
      st::OsThreadNameBlock t;
      if (!t.Decode(c)) return malformed("thread-name");
      thread_names[t.tid] = ValidUtf8(t.name);
      break;
    }
    case st::kDrops: {
      st::DropsBlock d;
      if (!d.Decode(c)) return malformed("drops");
      const std::array<uint64_t, 3> now{d.dropped_ranges, d.dropped_events, d.unmatched_pops};
      auto& last = drops_by_slot[d.slot];
      for (int k = 0; k < 3; ++k) {
        slot_drops[k] += now[k] >= last[k] ? now[k] - last[k] : now[k];
        last[k] = now[k];
      }
      break;
    }
    case st::kProcessDrops:
      if (!process_drops.Decode(c)) return malformed("process-drops");
      break;
    case st::kNameCounts:
      if (!name_counts.Decode(c)) return malformed("name-counts");
      break;
    case st::kNotice: {
      st::NoticeBlock n;
      if (n.Decode(c))
        summary.notices.push_back("pid " + std::to_string(process.pid) + ": " + ValidUtf8(n.text));
      break;
    }
    case st::kEnd:
    case st::kExec:
    case st::kExecFailed:
      ReadEnd(b, &process);
      break;
    case st::kStep:
    case st::kCapture:
    case st::kStop:
    case st::kDemand:
      if (!preloaded) return Boundary(b);
      break;
    case st::kEvents:
      return DecodeEvents(b);
    case st::kGpuActivity:
      return DecodeGpu(b);
    default:
      break;  // unknown blocks: a newer runtime's additions
  }
  return Status::Ok();
}

Status StreamDecoder::Impl::Boundary(const st::RawBlock& b) {
  st::Cursor c(b.payload);
  switch (b.type) {
    case st::kStep: {
      st::StepBlock s;
      if (!s.Decode(c)) return Error{Where(b.offset) + ": malformed step block"};
      ++summary.steps;
      last_step = s.step;
      last_step_ticks = s.ticks;
      ++steps_seen;
      Opened(windows.OnStep(s.ticks, s.step, static_cast<ProfilerAction>(s.action)));
      break;
    }
    case st::kCapture: {
      st::CaptureBlock capture;
      if (!capture.Decode(c)) return Error{Where(b.offset) + ": malformed capture block"};
      Opened(windows.OnCapture(capture.ticks, capture.begin != 0));
      break;
    }
    case st::kDemand: {
      st::DemandBlock demand;
      if (!demand.Decode(c)) return Error{Where(b.offset) + ": malformed on-demand block"};
      windows.OnDemand(static_cast<uint64_t>(demand.request));
      break;
    }
    case st::kStop: {
      st::StopBlock stop;
      if (!stop.Decode(c)) return Error{Where(b.offset) + ": malformed stop block"};
      windows.OnStop(stop.ticks);
      break;
    }
    default:
      break;
  }
  return Status::Ok();
}

namespace {

// The file header's problem, for people; empty when it is fine (or just not complete yet).
std::string HeaderProblem(const std::string& path, st::HeaderStatus status, uint32_t version) {
  switch (status) {
    case st::HeaderStatus::kBadMagic:
      return path + ": not a profsh stream (bad magic)";
    case st::HeaderStatus::kBadVersion:
      return path + ": stream version " + std::to_string(version) + ", this profsh reads version " +
             std::to_string(st::kVersion) + " (record it again with this profsh)";
    case st::HeaderStatus::kBadSize:
      return path + ": not a profsh stream (its header size is too small)";
    default:
      return "";
  }
}

}  // namespace

StreamDecoder::StreamDecoder(std::string path, WindowSink& sink, SessionSummary& summary,
                             std::vector<std::string>& warnings)
    : path_(std::move(path)), impl_(std::make_unique<Impl>(*this, sink, summary, warnings)) {}

StreamDecoder::~StreamDecoder() = default;

const StreamProcess& StreamDecoder::process() const {
  return impl_->process;
}
void StreamDecoder::SetLastImage(bool last) {
  impl_->last_image = last;
}
void StreamDecoder::SetStreamIndex(uint32_t index) {
  impl_->gpu.SetStreamIndex(index);
}
void StreamDecoder::SetGpuWait(int64_t ns) {
  impl_->gpu_wait_ns = ns;
}
bool StreamDecoder::has_process() const {
  return impl_->has_process;
}

void StreamDecoder::SetClock(uint64_t ticks0, int64_t real0, double ns_per_tick) {
  impl_->clock.Set(ticks0, real0, ns_per_tick);
}

Result<size_t> StreamDecoder::Feed(std::string_view data, size_t offset) {
  size_t start = 0;
  if (offset == 0) {
    uint32_t version = 0;
    const st::HeaderStatus status = st::CheckFileHeader(data, &start, &version);
    if (status == st::HeaderStatus::kShort) return size_t{0};
    if (status != st::HeaderStatus::kOk) return Error{HeaderProblem(path_, status, version)};
  }
  st::BlockIterator blocks(data, start, offset);
  st::RawBlock b;
  while (blocks.Next(&b)) {
    Status s = impl_->HandleBlock(b);
    if (!s.ok()) return Error{s.message()};
  }
  return blocks.consumed();
}

Result<StreamOutline> OutlineStream(const std::string& path, std::string_view data) {
  size_t start = 0;
  uint32_t version = 0;
  const st::HeaderStatus status = st::CheckFileHeader(data, &start, &version);
  if (status == st::HeaderStatus::kShort)
    return Error{path + ": not a profsh stream (shorter than its header)"};
  if (status != st::HeaderStatus::kOk) return Error{HeaderProblem(path, status, version)};
  StreamOutline outline;
  bool have_process = false;
  st::BlockIterator blocks(data, start);
  st::RawBlock b;
  while (blocks.Next(&b)) {
    if (b.type == st::kProcess && !have_process) {
      Status s = ReadStreamProcess(path, b, &outline.process);
      if (!s.ok()) return Error{s.message()};
      have_process = true;
    } else if (b.type == st::kClock) {
      st::Cursor c(b.payload);
      st::ClockBlock clock;
      if (!clock.Decode(c))
        return Error{path + ": block at byte " + std::to_string(b.offset) +
                     ": malformed clock block"};
      outline.clocks.push_back(clock);
    } else {
      ReadEnd(b, &outline.process);
    }
  }
  if (!have_process)
    return Error{path + ": the stream has no process block (cut short at creation?)"};
  outline.cut = blocks.has_partial_block();
  outline.cut_at = blocks.consumed();
  return outline;
}

Status StreamDecoder::Preload(std::string_view data) {
  Impl& m = *impl_;
  size_t start = 0;
  uint32_t version = 0;
  const st::HeaderStatus status = st::CheckFileHeader(data, &start, &version);
  if (status != st::HeaderStatus::kOk) return Error{HeaderProblem(path_, status, version)};
  st::BlockIterator blocks(data, start);
  st::RawBlock b;
  while (blocks.Next(&b)) {
    Status s = Status::Ok();
    if (b.type == st::kProcess || b.type == st::kConfig) {
      s = m.HandleBlock(b);
    } else if (b.type == st::kStep || b.type == st::kCapture || b.type == st::kStop ||
               b.type == st::kDemand) {
      s = m.Boundary(b);
    }
    if (!s.ok()) return s;
  }
  m.OpenWholeRunIfNeeded();
  st::BlockIterator gpu_blocks(data, start);
  while (gpu_blocks.Next(&b)) {
    if (b.type == st::kGpuActivity) m.PreloadLaunches(b);
  }
  m.preloaded = true;
  return Status::Ok();
}

ProcessHangState StreamDecoder::HangState() {
  Impl& m = *impl_;
  ProcessHangState state;
  state.pid = m.process.pid;
  state.command = m.process.cmdline.empty() ? m.process.exe : m.process.cmdline;
  for (char& c : state.command) {
    if (c == '\0') c = ' ';
  }
  state.steps = m.steps_seen;
  state.last_step = m.last_step;
  state.last_step_ns = m.last_step >= 0 ? m.clock.ToNs(m.last_step_ticks) : 0;
  struct Level {
    int64_t tid;
    uint64_t ticks;
    OpenRangeNow range;
  };
  std::vector<Level> levels;
  m.matcher.ForEachOpen([&](int64_t tid, OpenLevel& level) {
    const st::StreamEvent& e = level.begin;
    OpenRangeNow r;
    r.tid = tid;
    if (auto it = m.thread_names.find(tid); it != m.thread_names.end()) r.thread = it->second;
    r.name = std::string(m.names.Text(e.name));
    r.kind = e.kind == st::kOpBegin        ? "operator"
             : e.kind == st::kTaskBegin    ? "task"
             : e.domain == m.python_domain ? "python"
                                           : "range";
    r.begin_ns = m.clock.ToNs(e.ticks);
    levels.push_back(Level{tid, e.ticks, std::move(r)});
  });
  // Per thread, innermost (the latest begun) first; domains interleaved by time.
  std::sort(levels.begin(), levels.end(), [](const Level& a, const Level& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.ticks > b.ticks;
  });
  for (const CollectiveLog::Entry& c : m.collectives.last()) {
    CollectiveEntered entered{c.tid, c.name, c.seq, c.seq_recorded, m.clock.ToNs(c.begin_ticks),
                              false};
    for (const Level& l : levels) {
      if (l.tid == c.tid && l.ticks == c.begin_ticks && l.range.name == c.name) entered.open = true;
    }
    state.collectives.push_back(std::move(entered));
  }
  for (Level& l : levels) state.open.push_back(std::move(l.range));
  return state;
}

int64_t StreamDecoder::WindowsKnownUntilNs() const {
  // Release's watermark: boundaries come at most two drain rounds late.
  const Impl& m = *impl_;
  if (!m.has_process || m.round_ends.size() < 3) return INT64_MIN;
  return m.clock.ToNs(m.round_ends[m.round_ends.size() - 3]);
}

void StreamDecoder::Finish() {
  Impl& m = *impl_;
  if (m.has_process) m.OpenWholeRunIfNeeded();
  m.Release(true);
  // What is still open ends with the stream.
  for (int64_t tid : m.matcher.ThreadsWithOpenLevels()) m.CloseThread(tid, m.last_ticks, false);
  if (Window* w = m.windows.open_window()) {
    w->end_ticks = std::max(m.last_ticks, w->begin_ticks);
    w->info.end_ns = m.clock.ToNs(w->end_ticks);
  }
  for (size_t i = m.windows.begin(); i < m.windows.end(); ++i) m.Seal(i, true);
  // Ends of ids never started (in a windowed stream their start may simply lie outside).
  const uint64_t unknown_ends = m.matcher.TakeUnknownEnds();
  if (!m.windowed) m.summary.unknown_range_ends += unknown_ends;
  SessionSummary& sum = m.summary;
  sum.threads += m.threads.size();
  sum.dropped_ranges += m.slot_drops[0];
  sum.dropped_events += m.slot_drops[1];
  sum.events_without_slot += m.process_drops.events_without_slot;
  sum.strings_refused += m.process_drops.strings_refused;
  sum.events_after_close += m.process_drops.events_after_close;
  sum.metadata_refused += m.process_drops.metadata_refused;
  for (uint32_t i = 0; i < m.name_counts.n; ++i)
    sum.AddNameBeforeFirstStep(std::string(m.names.Text(m.name_counts.names[i])),
                               m.name_counts.counts[i]);
  sum.memory_peak = SaturatingAdd(sum.memory_peak, m.memory_peak);
  sum.memory_at_end = SaturatingAdd(sum.memory_at_end, m.memory_total);
  const GpuCounts& g = m.gpu.counts;
  sum.gpu_kernels += g.kernels;
  sum.gpu_copies += g.copies;
  sum.gpu_sets += g.sets;
  sum.gpu_calls += g.calls;
  sum.gpu_calls_left_out += g.calls_left_out;
  sum.gpu_syncs += g.syncs;
  sum.gpu_memory_events += g.memory;
  sum.gpu_records_dropped += g.cupti_dropped;
  sum.gpu_buffers_refused += g.buffers_refused;
  sum.gpu_records_ignored += g.kinds_ignored;
  sum.gpu_records_untimed += g.untimed;
  sum.gpu_records_unwritten += g.unwritten;
}

}  // namespace profsh
