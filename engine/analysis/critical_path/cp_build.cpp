// The graph as HTA's CPGraph._construct_graph builds it: nodes for the events in the window,
// then the runtime-lock edges, the call-stack edges of each CPU thread (cp_call_stacks.cpp), and
// the kernel edges (cp_kernels.cpp); then what bounds each edge.
#include "engine/analysis/critical_path/cp_build.h"

#include <algorithm>

#include "engine/analysis/critical_path/cp_builder.h"

namespace profsh {
namespace critical_path_detail {
namespace {

bool IsAnyOf(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

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

bool IsCommunicationKernel(std::string_view name) {
  return name.starts_with("nccl") || name.starts_with("hip") || name.starts_with("hccl") ||
         name.find("ncclKernel") != std::string_view::npos;
}

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
  if (unmatched_waits_ > 0)
    notes->push_back(
        std::to_string(unmatched_waits_) +
        " Event Sync or Stream Wait Event record(s) name no cudaEventRecord whose launch is in the "
        "trace (argument wait_on_cuda_event_record_corr_id, which torch 2.1+'s Kineto and "
        "profsh's CUPTI recording write): the path does not follow those waits");
  return std::move(graph_);
}

}  // namespace critical_path_detail

CpGraph BuildCriticalPathGraph(const EventModel& model, const CriticalPathOptions& options,
                               const std::vector<int32_t>& rank_of_track,
                               std::optional<int32_t> rank, int64_t start, int64_t end,
                               std::vector<std::string>* notes) {
  return critical_path_detail::Builder(model, options, rank_of_track, rank)
      .Build(start, end, notes);
}

}  // namespace profsh
