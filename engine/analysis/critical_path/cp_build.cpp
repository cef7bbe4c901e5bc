// The graph as HTA's CPGraph._construct_graph builds it: nodes for the events in the window,
// then the runtime-lock edges, the call-stack edges of each CPU thread, and the kernel edges
// (launch delays, kernel-to-kernel delays, synchronizations). Each step names the HTA function
// it follows; docs/ANALYSIS.md ("Critical path") lists where profsh differs.
#include "engine/analysis/critical_path/cp_build.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "engine/analysis/model/event_ids.h"

namespace profsh {
namespace {

// HTA's KERNEL_KERNEL_DELAY_THRESHOLD_US: a longer gap between kernels is not a delay.
constexpr int64_t kKernelKernelDelayThresholdNs = 1500 * 1000;

bool IsAnyOf(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// What the graph needs to know of an event's name, decided once per template.
struct NameFlags {
  bool runtime_lock = false;  // HTA's CUDA_RUNTIME_EVENTS: calls that take the runtime's lock
  bool blocking = false;      // HTA's BLOCKING_SYNC_CALLS: their span is waiting, not work
  bool launch = false;        // get_runtime_launch_events_mask's calls
  bool graph_launch = false;  // cudaGraphLaunch and its kin (not in HTA's list: HTA#290)
  bool data_load = false;
  bool event_record = false, stream_wait_call = false;
  bool stream_wait_event = false, event_sync = false, stream_sync = false, context_sync = false;
  bool forward = false, autograd = false;  // HTA's _get_fwd_tid / _get_bwd_tid
};

NameFlags FlagsOfName(std::string_view name, const CriticalPathOptions& options) {
  NameFlags f;
  f.runtime_lock = IsAnyOf(name, {"cudaHostAlloc", "cudaLaunchKernel", "cudaMemcpyAsync"});
  f.blocking = IsAnyOf(name, {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventQuery",
                              "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpyAsync"});
  f.launch = IsAnyOf(name, {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",
                            "cuLaunchKernelEx", "cudaMemcpyAsync", "cudaMemsetAsync",
                            "runFunction - job_prep_and_submit_for_execution", "hipLaunchKernel",
                            "hipExtModuleLaunchKernel", "hipMemsetAsync", "hipMemcpyAsync",
                            "hipMemcpyWithStream"});
  f.graph_launch = IsAnyOf(name, {"cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"});
  for (const std::string& pattern : options.data_load_events)
    if (!pattern.empty() && name.find(pattern) != std::string_view::npos) f.data_load = true;
  f.event_record = name == "cudaEventRecord";
  f.stream_wait_call = name == "cudaStreamWaitEvent";
  f.stream_wait_event = name == "Stream Wait Event";
  f.event_sync = name == "Event Sync";
  f.stream_sync = name == "Stream Sync";
  f.context_sync = name == "Context Sync";
  f.forward = name.find("forward") != std::string_view::npos;
  f.autograd = name.find("autograd") != std::string_view::npos;
  return f;
}

// HTA's is_comm_kernel: CommunicateKernelGroupingPattern,
// (^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*).
bool IsCommunicationKernel(std::string_view name) {
  return name.starts_with("nccl") || name.starts_with("hip") || name.starts_with("hccl") ||
         name.find("ncclKernel") != std::string_view::npos;
}

class Builder {
 public:
  Builder(const EventModel& model, const CriticalPathOptions& options,
          const std::vector<int32_t>& rank_of_track, std::optional<int32_t> rank)
      : model_(model),
        trace_(model.trace()),
        events_(model.trace().events),
        ids_(model.ids()),
        options_(options),
        rank_of_track_(rank_of_track),
        rank_(rank),
        times_(model.trace(), options.hta_rounding) {}

  CpGraph Build(int64_t start, int64_t end, std::vector<std::string>* notes);

 private:
  static constexpr uint32_t kNone = UINT32_MAX;

  const NameFlags& Flags(size_t ev) const { return flags_[events_.template_column()[ev]]; }
  bool InRank(size_t ev) const { return !rank_ || rank_of_track_[events_.track(ev)] == *rank_; }
  // HTA's "stream" column: device work's stream, -1 for everything else (and for the syncs
  // that have no stream: Event Sync, Context Sync).
  int64_t Stream(size_t ev) const {
    const uint32_t w = work_of_event_[ev];
    if (w == kNone) return -1;
    const int64_t s = ids_.device_work.stream[w];
    return s == kNoId ? -1 : s;
  }
  uint32_t RuntimeEventOf(size_t ev) const {
    const uint32_t w = work_of_event_[ev];
    if (w == kNone) return kNone;
    // A job's ranks reuse correlation ids: the call is the first on the work's own rank.
    for (uint32_t r : model_.links().RuntimeCandidates(w))
      if (SameRank(ids_.runtime.event[r], ev)) return ids_.runtime.event[r];
    return kNone;
  }
  bool SameRank(size_t a, size_t b) const {
    return rank_of_track_[events_.track(a)] == rank_of_track_[events_.track(b)];
  }
  bool IsSyncWork(size_t ev) const {
    const uint32_t w = work_of_event_[ev];
    return w != kNone && model_.role(ev).work == DeviceWorkKind::kSync;
  }
  bool HasCorrelation(size_t ev) const {
    const uint32_t w = work_of_event_[ev];
    return w != kNone && ids_.device_work.correlation[w] != kNoId &&
           ids_.device_work.correlation[w] >= 0;
  }

  void IndexEvents();
  void Clip(int64_t start, int64_t end);
  void CreateNodes();
  void RuntimeLockEdges();
  void CallStackEdges();
  void ThreadEdges(const std::vector<uint32_t>& thread_events);
  void QueueLengths();
  void EventSyncTables();
  void KernelEdges();
  void AssignBounds();

  uint32_t AddSpanEdge(uint32_t src, uint32_t dst, CpEdgeType type, bool zero_weight = false);
  void Attribute(uint32_t edge, uint32_t src_parent);
  bool SharesRuntimeLock(uint32_t first, uint32_t second) const {
    return Flags(graph_.node_event[first]).runtime_lock &&
           Flags(graph_.node_event[second]).runtime_lock &&
           (graph_.node_is_start[first] || !graph_.node_is_start[second]);
  }

  const EventModel& model_;
  const Trace& trace_;
  const EventTable& events_;
  const EventIds& ids_;
  const CriticalPathOptions& options_;
  const std::vector<int32_t>& rank_of_track_;
  std::optional<int32_t> rank_;
  const CpTimes times_;

  std::vector<NameFlags> flags_;                   // per template
  std::vector<uint32_t> work_of_event_;            // index into device_work, or kNone
  std::vector<uint32_t> kernel_of_runtime_event_;  // the last device work with its correlation
  std::vector<uint8_t> clipped_;
  std::vector<uint32_t> start_node_, end_node_;  // per event, or kNone
  // Queue lengths (HTA's TraceCounters): after a launch (+1) or a kernel (-1) on its stream.
  std::unordered_map<uint32_t, int64_t> queue_after_;
  // The launch before a cudaEventRecord (by the record's correlation), the launch after a
  // cudaStreamWaitEvent (by the call's event).
  std::unordered_map<int64_t, uint32_t> launch_before_record_;
  std::unordered_map<uint32_t, uint32_t> launch_after_wait_;
  CpGraph graph_;
};

void Builder::IndexEvents() {
  const auto& templates = events_.templates();
  flags_.reserve(templates.size());
  for (const EventTemplate& t : templates)
    flags_.push_back(FlagsOfName(trace_.str(t.name), options_));
  work_of_event_.assign(events_.size(), kNone);
  for (size_t w = 0; w < ids_.device_work.size(); ++w)
    work_of_event_[ids_.device_work.event[w]] = static_cast<uint32_t>(w);
  kernel_of_runtime_event_.assign(events_.size(), kNone);
  for (size_t w = 0; w < ids_.device_work.size(); ++w) {
    const uint32_t ev = ids_.device_work.event[w];
    if (Stream(ev) < 0 && !IsSyncWork(ev)) continue;
    for (uint32_t r : model_.links().RuntimeCandidates(w))
      if (SameRank(ids_.runtime.event[r], ev)) kernel_of_runtime_event_[ids_.runtime.event[r]] = ev;
  }
}

// CriticalPathAnalysis.critical_path_analysis's clipping: CPU events (stream -1) that start in
// the window and last; device work whose runtime call does; every Stream Wait Event.
void Builder::Clip(int64_t start, int64_t end) {
  clipped_.assign(events_.size(), 0);
  auto in_window = [&](int64_t ts) { return ts >= start && ts <= end; };
  for (size_t ev = 0; ev < events_.size(); ++ev) {
    if (events_.phase(ev) != 'X' || !InRank(ev)) continue;
    const EventRole role = model_.role(ev).role;
    if (role == EventRole::kGpuAnnotation || role == EventRole::kOther) continue;
    if (Stream(ev) == -1) {
      clipped_[ev] = in_window(times_.Ts(ev)) && times_.Dur(ev) > 0;
    } else {
      const uint32_t r = RuntimeEventOf(ev);
      clipped_[ev] = (r != kNone && in_window(times_.Ts(r)) && times_.Dur(r) > 0) ||
                     Flags(ev).stream_wait_event;
    }
  }
}

// _create_event_nodes: a start and an end node for each operator, runtime call, data-loading
// event and device work with a correlation, ordered by (time, event).
void Builder::CreateNodes() {
  struct Point {
    int64_t ts;
    uint32_t ev;
    bool is_end;
  };
  std::vector<Point> points;
  for (size_t ev = 0; ev < events_.size(); ++ev) {
    if (!clipped_[ev]) continue;
    const EventRole role = model_.role(ev).role;
    const bool node = role == EventRole::kCpuOp || role == EventRole::kRuntime ||
                      Flags(ev).data_load || (Stream(ev) != -1 && HasCorrelation(ev));
    if (!node) continue;
    points.push_back({times_.Ts(ev), static_cast<uint32_t>(ev), false});
    points.push_back({times_.End(ev), static_cast<uint32_t>(ev), true});
  }
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.ev != b.ev) return a.ev < b.ev;
    return a.is_end < b.is_end;
  });
  start_node_.assign(events_.size(), kNone);
  end_node_.assign(events_.size(), kNone);
  for (const Point& p : points) {
    const uint32_t n = graph_.AddNode(p.ts, p.ev, !p.is_end);
    (p.is_end ? end_node_ : start_node_)[p.ev] = n;
  }
}

uint32_t Builder::AddSpanEdge(uint32_t src, uint32_t dst, CpEdgeType type, bool zero_weight) {
  const bool zero =
      zero_weight || type == CpEdgeType::kDependency || type == CpEdgeType::kSyncDependency;
  return graph_.AddEdge(src, dst, type, zero ? 0 : graph_.node_ts[dst] - graph_.node_ts[src]);
}

// _attribute_edge: an operator or kernel span belongs to the event it lies in.
void Builder::Attribute(uint32_t edge, uint32_t src_parent) {
  const CpEdgeType type = graph_.edge_type[edge];
  if (type != CpEdgeType::kOperatorKernel && type != CpEdgeType::kKernelKernelDelay) return;
  const uint32_t src = graph_.edge_src[edge], dst = graph_.edge_dst[edge];
  uint32_t ev;
  if (type == CpEdgeType::kKernelKernelDelay || graph_.node_is_start[src])
    ev = graph_.node_event[src];
  else if (!graph_.node_is_start[dst])
    ev = graph_.node_event[dst];
  else
    ev = src_parent;  // between two children: the parent's time
  graph_.edge_event[edge] = ev;
}

// _construct_graph_from_cuda_runtime_events: runtime calls that hold the runtime's lock run one
// at a time, in the order they end.
void Builder::RuntimeLockEdges() {
  std::vector<uint32_t> open_starts;
  uint32_t last = kNone;
  for (uint32_t n = 0; n < graph_.node_count(); ++n) {
    const uint32_t ev = graph_.node_event[n];
    if (!Flags(ev).runtime_lock) continue;
    if (graph_.node_is_start[n]) {
      open_starts.push_back(n);
    } else {
      while (!open_starts.empty()) {
        const uint32_t s = open_starts.back();
        open_starts.pop_back();
        if (graph_.node_event[s] == ev) {
          Attribute(AddSpanEdge(s, n, CpEdgeType::kOperatorKernel), ev);
        } else {
          AddSpanEdge(s, n, CpEdgeType::kDependency);
        }
      }
      if (last != kNone && !graph_.node_is_start[last])
        AddSpanEdge(last, n, CpEdgeType::kDependency);
    }
    last = n;
  }
}

// _construct_graph_from_call_stacks: each CPU thread's call stack (HTA's CallStackGraph),
// walked depth first; the backward thread is merged into the forward thread when each is one.
void Builder::CallStackEdges() {
  struct ThreadKey {
    int64_t pid, tid;
    bool operator<(const ThreadKey& o) const { return pid != o.pid ? pid < o.pid : tid < o.tid; }
  };
  auto ident = [&](const Ident& i) { return i.is_string ? static_cast<int64_t>(i.str) : i.number; };
  // HTA's _get_tid_for_event: the one thread with cpu_op or user_annotation events so named.
  auto only_tid = [&](bool NameFlags::*flag) -> std::optional<int64_t> {
    std::optional<int64_t> tid;
    for (size_t ev = 0; ev < events_.size(); ++ev) {
      if (!clipped_[ev] || !(Flags(ev).*flag)) continue;
      const TemplateRole& r = model_.role(ev);
      if (r.role != EventRole::kCpuOp &&
          !(r.role == EventRole::kAnnotation && r.source == AnnotationSource::kRecordFunction))
        continue;
      const int64_t t = ident(trace_.tracks[events_.track(ev)].tid);
      if (tid && *tid != t) return std::nullopt;
      tid = t;
    }
    return tid;
  };
  const std::optional<int64_t> fwd = only_tid(&NameFlags::forward);
  const std::optional<int64_t> bwd = only_tid(&NameFlags::autograd);
  const bool merge = fwd && bwd && *fwd != *bwd;

  std::map<ThreadKey, std::vector<uint32_t>> threads;
  std::vector<uint8_t> gpu_thread(trace_.tracks.size(), 0);
  for (size_t ev = 0; ev < events_.size(); ++ev)
    if (clipped_[ev] && Stream(ev) > 0) gpu_thread[events_.track(ev)] = 1;
  for (size_t ev = 0; ev < events_.size(); ++ev) {
    if (!clipped_[ev] || Stream(ev) != -1 || gpu_thread[events_.track(ev)]) continue;
    const Track& t = trace_.tracks[events_.track(ev)];
    int64_t tid = ident(t.tid);
    if (merge && tid == *bwd) tid = *fwd;
    threads[{ident(t.pid), tid}].push_back(static_cast<uint32_t>(ev));
  }
  for (const auto& [key, thread_events] : threads) ThreadEdges(thread_events);
}

void Builder::ThreadEdges(const std::vector<uint32_t>& thread_events) {
  // CallStackGraph._construct_call_stack_graph: starts and ends in compare_events' order; a
  // start's parent is the top of the stack, an end pops the top.
  struct Mark {
    int64_t time, dur;
    uint32_t ev;
    bool start;
  };
  std::vector<Mark> marks;
  marks.reserve(thread_events.size() * 2);
  for (uint32_t ev : thread_events) {
    const int64_t dur = std::max<int64_t>(times_.Dur(ev), 0);
    marks.push_back({times_.Ts(ev), dur, ev, true});
    marks.push_back({times_.Ts(ev) + dur, dur, ev, false});
  }
  auto before = [](const Mark& x, const Mark& y) {
    if (x.ev == y.ev) return x.start && !y.start;
    if (x.time != y.time) return x.time < y.time;
    if (x.start == y.start) {
      if (x.dur == y.dur) return x.start ? x.ev < y.ev : x.ev > y.ev;
      return x.start ? x.dur > y.dur : x.dur < y.dur;
    }
    if (x.dur > 0 && y.dur > 0) return !x.start;
    if (x.dur == 0 && y.dur == 0) return x.ev < y.ev;
    return x.start;
  };
  std::stable_sort(marks.begin(), marks.end(), before);
  std::unordered_map<uint32_t, uint32_t> local;  // event -> index in thread_events order
  std::vector<uint32_t> parent, first_child, next_sibling, last_child;
  std::vector<uint32_t> order;  // local index -> event
  const uint32_t root = 0;
  order.push_back(kNone);
  parent.push_back(kNone);
  first_child.push_back(kNone);
  next_sibling.push_back(kNone);
  last_child.push_back(kNone);
  std::vector<uint32_t> stack;
  for (const Mark& m : marks) {
    if (m.start) {
      const uint32_t p = stack.empty() ? root : stack.back();
      const uint32_t c = static_cast<uint32_t>(order.size());
      order.push_back(m.ev);
      parent.push_back(p);
      first_child.push_back(kNone);
      next_sibling.push_back(kNone);
      last_child.push_back(kNone);
      if (last_child[p] == kNone)
        first_child[p] = c;
      else
        next_sibling[last_child[p]] = c;
      last_child[p] = c;
      stack.push_back(c);
    } else if (!stack.empty()) {
      stack.pop_back();
    }
  }

  // _construct_graph_from_call_stack's depth-first walk.
  uint32_t last = kNone, last_parent = kNone;
  int depth = 0;
  auto event_of = [&](uint32_t local_index) { return order[local_index]; };
  auto enter = [&](uint32_t c) {
    const uint32_t ev = event_of(c);
    if (ev == kNone || start_node_[ev] == kNone || end_node_[ev] == kNone) return;
    const uint32_t s = start_node_[ev];
    if (last != kNone && !SharesRuntimeLock(last, s)) {
      const CpEdgeType type = depth == 0 ? CpEdgeType::kDependency : CpEdgeType::kOperatorKernel;
      Attribute(AddSpanEdge(last, s, type), last_parent);
    }
    last = s;
    last_parent = event_of(parent[c]);
    ++depth;
  };
  auto exit = [&](uint32_t c) {
    const uint32_t ev = event_of(c);
    if (ev == kNone || start_node_[ev] == kNone || end_node_[ev] == kNone) return;
    const uint32_t e = end_node_[ev];
    if (last != kNone && !SharesRuntimeLock(last, e)) {
      Attribute(AddSpanEdge(last, e, CpEdgeType::kOperatorKernel, Flags(ev).blocking), last_parent);
    }
    last = e;
    last_parent = event_of(parent[c]);
    --depth;
  };
  // Iterative: a call stack can be deep.
  std::vector<std::pair<uint32_t, bool>> walk{{root, false}};
  while (!walk.empty()) {
    auto [c, entered] = walk.back();
    if (!entered) {
      walk.back().second = true;
      enter(c);
      std::vector<uint32_t> children;
      for (uint32_t k = first_child[c]; k != kNone; k = next_sibling[k]) children.push_back(k);
      for (auto it = children.rbegin(); it != children.rend(); ++it) walk.push_back({*it, false});
    } else {
      walk.pop_back();
      exit(c);
    }
  }
}

// TraceCounters._get_queue_length_time_series_for_rank, on the whole trace (of the rank): +1 at
// each launch on its kernel's stream, -1 at each kernel a launch launched, per stream number.
void Builder::QueueLengths() {
  struct Change {
    int64_t ts;
    uint8_t kernel;  // launches first at equal times
    uint32_t ev;
    int64_t stream;
  };
  std::vector<Change> changes;
  for (size_t w = 0; w < ids_.device_work.size(); ++w) {
    const uint32_t ev = ids_.device_work.event[w];
    if (!InRank(ev) || Stream(ev) == -1) continue;
    const uint32_t r = RuntimeEventOf(ev);
    if (r == kNone || !(Flags(r).launch || Flags(r).graph_launch)) continue;
    changes.push_back({times_.Ts(ev), 1, ev, Stream(ev)});
    changes.push_back({times_.Ts(r), 0, r, Stream(ev)});
  }
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    if (a.stream != b.stream) return a.stream < b.stream;
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.kernel != b.kernel) return a.kernel < b.kernel;
    return a.ev < b.ev;
  });
  int64_t queue = 0;
  for (size_t i = 0; i < changes.size(); ++i) {
    if (i == 0 || changes[i].stream != changes[i - 1].stream) queue = 0;
    queue += changes[i].kernel ? -1 : 1;
    queue_after_[changes[i].ev] = queue;
  }
}

// _get_cuda_event_record_df and _get_cuda_stream_wait_event_df: the launch a cudaEventRecord
// follows on the recorded stream, and the launch a cudaStreamWaitEvent precedes on its thread
// and stream.
void Builder::EventSyncTables() {
  const TypedArgs& args = model_.args();
  // The stream and device each recorded event was recorded on, from the syncs that wait on it.
  std::unordered_map<int64_t, std::pair<int64_t, int64_t>> record_stream;  // corr -> (gpu, stream)
  bool any_wait = false;
  for (size_t w = 0; w < ids_.device_work.size(); ++w) {
    const uint32_t ev = ids_.device_work.event[w];
    if (!IsSyncWork(ev) || !InRank(ev)) continue;
    const auto corr = args.Int(ev, KnownArg::kWaitOnEventRecordCorrelation);
    const auto stream = args.Int(ev, KnownArg::kWaitOnStream);
    if (!corr || !stream || *stream <= -1) continue;
    any_wait = true;
    record_stream.try_emplace(*corr, ids_.device_work.device[w], *stream);
  }
  if (!any_wait) return;
  struct Launch {
    int64_t ts;
    uint32_t ev;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Launch>> by_stream;            // (gpu, stream)
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<Launch>> by_thread;  // pid, tid, s
  auto ident = [](const Ident& i) { return i.is_string ? static_cast<int64_t>(i.str) : i.number; };
  for (size_t r = 0; r < ids_.runtime.size(); ++r) {
    const uint32_t ev = ids_.runtime.event[r];
    if (!InRank(ev) || !Flags(ev).launch) continue;
    const uint32_t k = kernel_of_runtime_event_[ev];
    if (k == kNone || Stream(k) == -1) continue;
    const int64_t device = ids_.device_work.device[work_of_event_[k]];
    by_stream[{device, Stream(k)}].push_back({times_.Ts(ev), ev});
    const Track& t = trace_.tracks[events_.track(ev)];
    by_thread[{ident(t.pid), ident(t.tid), Stream(k)}].push_back({times_.Ts(ev), ev});
  }
  auto by_time = [](const Launch& a, const Launch& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.ev < b.ev;
  };
  for (auto& [key, launches] : by_stream) std::sort(launches.begin(), launches.end(), by_time);
  for (auto& [key, launches] : by_thread) std::sort(launches.begin(), launches.end(), by_time);
  for (size_t r = 0; r < ids_.runtime.size(); ++r) {
    const uint32_t ev = ids_.runtime.event[r];
    if (!InRank(ev)) continue;
    const int64_t ts = times_.Ts(ev);
    if (Flags(ev).event_record) {
      auto rs = record_stream.find(ids_.runtime.correlation[r]);
      if (rs == record_stream.end()) continue;
      auto it = by_stream.find(rs->second);
      if (it == by_stream.end()) continue;
      auto after = std::upper_bound(it->second.begin(), it->second.end(), ts,
                                    [](int64_t t, const Launch& l) { return t < l.ts; });
      if (after != it->second.begin())
        launch_before_record_[ids_.runtime.correlation[r]] = std::prev(after)->ev;
    } else if (Flags(ev).stream_wait_call) {
      const uint32_t k = kernel_of_runtime_event_[ev];  // its Stream Wait Event
      if (k == kNone) continue;
      const Track& t = trace_.tracks[events_.track(ev)];
      auto it = by_thread.find({ident(t.pid), ident(t.tid), Stream(k)});
      if (it == by_thread.end()) continue;
      auto next = std::lower_bound(it->second.begin(), it->second.end(), ts,
                                   [](const Launch& l, int64_t t) { return l.ts < t; });
      if (next != it->second.end()) launch_after_wait_[ev] = next->ev;
    }
  }
}

// _construct_graph_from_kernels.
void Builder::KernelEdges() {
  const TypedArgs& args = model_.args();
  struct Row {
    int64_t sort_by;
    uint32_t ev;
  };
  std::vector<Row> rows;
  for (size_t ev = 0; ev < events_.size(); ++ev) {
    if (!clipped_[ev] || !HasCorrelation(ev)) continue;
    if (Stream(ev) == -1 && !Flags(ev).event_sync && !Flags(ev).context_sync) continue;
    // Sorted by start, but a sync by its end: a sync can span the copy it waits for.
    rows.push_back({IsSyncWork(ev) ? times_.End(ev) : times_.Ts(ev), static_cast<uint32_t>(ev)});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.sort_by < b.sort_by; });

  std::vector<int64_t> stream_order;  // streams in the order they got a kernel
  std::unordered_map<int64_t, uint32_t> last_node;
  std::unordered_map<uint32_t, uint32_t> kernel_sync;  // kernel -> the kernel it waits for
  auto sync_to_cpu = [&](uint32_t gpu_node, uint32_t runtime) {
    if (runtime == kNone || end_node_[runtime] == kNone) return;
    AddSpanEdge(gpu_node, end_node_[runtime], CpEdgeType::kSyncDependency);
  };
  for (const Row& row : rows) {
    const uint32_t ev = row.ev;
    const NameFlags& f = Flags(ev);
    if (IsSyncWork(ev)) {
      const uint32_t runtime = RuntimeEventOf(ev);
      if (f.stream_wait_event || f.event_sync) {
        const auto corr = args.Int(ev, KnownArg::kWaitOnEventRecordCorrelation);
        if (!corr) continue;
        auto before = launch_before_record_.find(*corr);
        if (before == launch_before_record_.end()) continue;
        const uint32_t src_kernel = kernel_of_runtime_event_[before->second];
        if (src_kernel == kNone) continue;
        if (f.stream_wait_event) {
          auto next =
              runtime == kNone ? launch_after_wait_.end() : launch_after_wait_.find(runtime);
          if (next == launch_after_wait_.end()) continue;
          const uint32_t dest_kernel = kernel_of_runtime_event_[next->second];
          if (dest_kernel != kNone) kernel_sync[dest_kernel] = src_kernel;
        } else if (end_node_[src_kernel] != kNone) {
          sync_to_cpu(end_node_[src_kernel], runtime);
        }
      } else if (f.stream_sync) {
        auto it = last_node.find(Stream(ev));
        if (it != last_node.end()) sync_to_cpu(it->second, runtime);
      } else if (f.context_sync) {
        for (int64_t s : stream_order) sync_to_cpu(last_node[s], runtime);
      }
      continue;
    }
    const uint32_t start = start_node_[ev], end = end_node_[ev];
    if (start == kNone || end == kNone) continue;
    Attribute(AddSpanEdge(start, end, CpEdgeType::kOperatorKernel), kNone);
    const int64_t stream = Stream(ev);
    const uint32_t runtime = RuntimeEventOf(ev);
    const bool graph_kernel = runtime != kNone && Flags(runtime).graph_launch;
    auto last_it = last_node.find(stream);
    const uint32_t last = last_it == last_node.end() ? kNone : last_it->second;

    uint32_t sync_end = kNone;
    bool waits = false;
    if (auto ks = kernel_sync.find(ev); ks != kernel_sync.end()) {
      waits = true;
      sync_end = end_node_[ks->second];
      if (sync_end == kNone) {
        waits = false;
      } else {
        AddSpanEdge(sync_end, start, CpEdgeType::kSyncDependency);
      }
      kernel_sync.erase(ks);
    }
    const int64_t runtime_ts = runtime == kNone ? 0 : times_.Ts(runtime);
    auto queue = [&](uint32_t e) -> std::optional<int64_t> {
      auto it = queue_after_.find(e);
      if (it == queue_after_.end()) return std::nullopt;
      return it->second;
    };
    // HTA: nothing was queued on the stream at the launch and nothing after the kernel. A graph
    // launch queues all its kernels at once, so its kernels ask only that the stream was idle.
    const bool queue_empty =
        graph_kernel || (queue(runtime) == 1 && runtime != kNone && queue(ev) == 0);
    bool launch_delay = false;
    if (runtime != kNone && queue_empty && (last == kNone || graph_.node_ts[last] < runtime_ts) &&
        (!waits || graph_.node_ts[sync_end] < runtime_ts) && start_node_[runtime] != kNone) {
      AddSpanEdge(start_node_[runtime], start, CpEdgeType::kKernelLaunchDelay);
      launch_delay = true;
    } else if (last != kNone &&
               graph_.node_ts[start] - graph_.node_ts[last] < kKernelKernelDelayThresholdNs &&
               (!waits || graph_.node_ts[sync_end] < graph_.node_ts[last])) {
      Attribute(AddSpanEdge(last, start, CpEdgeType::kKernelKernelDelay), kNone);
    }
    // A kernel of a graph launch always hangs off its launch (HTA loses them: HTA#290).
    if (!launch_delay && (options_.zero_weight_launch_edges || graph_kernel) && runtime != kNone &&
        start_node_[runtime] != kNone)
      AddSpanEdge(start_node_[runtime], start, CpEdgeType::kKernelLaunchDelay, true);
    if (last == kNone) stream_order.push_back(stream);
    last_node[stream] = end;
  }
}

// CPGraph.bound_by.
void Builder::AssignBounds() {
  for (size_t e = 0; e < graph_.edge_count(); ++e) {
    CpBound b = CpBound::kNone;
    switch (graph_.edge_type[e]) {
      case CpEdgeType::kKernelKernelDelay:
        b = CpBound::kKernelKernelOverhead;
        break;
      case CpEdgeType::kKernelLaunchDelay:
        b = CpBound::kKernelLaunchOverhead;
        break;
      case CpEdgeType::kDependency:
      case CpEdgeType::kSyncDependency:
        break;
      case CpEdgeType::kOperatorKernel: {
        const uint32_t ev = graph_.edge_event[e];
        if (ev == kCpNoEvent || Stream(ev) < 0)
          b = ev != kCpNoEvent && Flags(ev).data_load ? CpBound::kDataLoading : CpBound::kCpu;
        else if (IsCommunicationKernel(trace_.str(events_.name(ev))))
          b = CpBound::kGpuCommunication;
        else
          b = CpBound::kGpuCompute;
        break;
      }
    }
    graph_.edge_bound[e] = b;
  }
}

CpGraph Builder::Build(int64_t start, int64_t end, std::vector<std::string>* notes) {
  IndexEvents();
  Clip(start, end);
  CreateNodes();
  RuntimeLockEdges();
  CallStackEdges();
  QueueLengths();
  EventSyncTables();
  KernelEdges();
  AssignBounds();
  (void)notes;
  return std::move(graph_);
}

}  // namespace

CpGraph BuildCriticalPathGraph(const EventModel& model, const CriticalPathOptions& options,
                               const std::vector<int32_t>& rank_of_track,
                               std::optional<int32_t> rank, int64_t start, int64_t end,
                               std::vector<std::string>* notes) {
  return Builder(model, options, rank_of_track, rank).Build(start, end, notes);
}

}  // namespace profsh
