// The builder of the critical path graph, shared by the files that add its parts: cp_build.cpp
// (nodes, runtime lock, bound_by), cp_call_stacks.cpp (each CPU thread's call stack) and
// cp_kernels.cpp (queue lengths, event syncs, the kernel edges). Each step names the HTA
// function it follows (hta/analyzers/critical_path_analysis.py); docs/ANALYSIS.md ("The critical
// path") lists where profsh differs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/analysis/critical_path/critical_path.h"
#include "engine/analysis/model/event_model.h"

namespace profsh::critical_path_detail {

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

NameFlags FlagsOfName(std::string_view name, const CriticalPathOptions& options);

// HTA's is_comm_kernel: CommunicateKernelGroupingPattern,
// (^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*).
bool IsCommunicationKernel(std::string_view name);

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
  size_t unmatched_waits_ = 0;  // Event Syncs and Stream Wait Events with no recorded kernel
  CpGraph graph_;
};

}  // namespace profsh::critical_path_detail
