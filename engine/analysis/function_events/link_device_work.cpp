// Device work to what launched it, by ids: newer Kineto gives kernels their op's External id,
// older Kineto only the runtime call's correlation (the op is then that call's parent, known once
// the events are nested). Runtime calls linked to an op on another thread move to its thread.
#include "engine/analysis/function_events/builder.h"

namespace profsh {

std::vector<int32_t> FunctionEventsBuilder::CandidatesOf(
    const std::vector<uint32_t>& events) const {
  // Both lists are in trace order: one merge.
  std::vector<int32_t> out(events.size(), -1);
  const size_t m = candidate_events_.size();
  size_t c = 0;
  for (size_t k = 0; k < events.size(); ++k) {
    while (c < m && candidate_events_[c] < events[k]) ++c;
    if (c < m && candidate_events_[c] == events[k]) out[k] = static_cast<int32_t>(c);
  }
  return out;
}

// The model keeps every candidate of an id in trace order; torch's rule is the first that is an
// event of its list (the dicts of _parse_kineto_results keep the first), which leaves out what
// the view leaves out (filtered names, ITT tasks of other domains).
//
// Newer Kineto (External id != correlation): the device work names its op; the runtime call
// moves to that op's thread, as torch's _parse_kineto_results does. Older Kineto: the runtime call
// with the same correlation, whose parent (known once nested) is the op.
void FunctionEventsBuilder::LinkDeviceWork() {
  const EventIds& ids = model_.ids();
  const LaunchLinks& launch = model_.links();
  const std::vector<int32_t> work_candidate = CandidatesOf(ids.device_work.event);
  const std::vector<int32_t> runtime_candidate = CandidatesOf(ids.runtime.event);
  range_candidate_ = CandidatesOf(ids.ranges.event);
  auto first_in_view = [](std::span<const uint32_t> members, const std::vector<int32_t>& of) {
    for (uint32_t k : members) {
      if (of[k] >= 0) return of[k];
    }
    return int32_t{-1};
  };
  links_.clear();
  link_op_.clear();
  runtime_of_link_.clear();
  for (size_t k = 0; k < ids.device_work.size(); ++k) {
    if (work_candidate[k] < 0) continue;  // a synchronization, or not in the view
    links_.push_back(static_cast<uint32_t>(work_candidate[k]));
    runtime_of_link_.push_back(first_in_view(launch.RuntimeCandidates(k), runtime_candidate));
    const int64_t external = ids.device_work.external[k];
    const int64_t correlation = ids.device_work.correlation[k];
    link_op_.push_back(external != kNoId && (correlation == kNoId || external != correlation)
                           ? first_in_view(launch.RangeCandidatesOfWork(k), range_candidate_)
                           : -1);
  }
  for (size_t k = 0; k < links_.size(); ++k) {
    const int32_t op = link_op_[k], runtime = runtime_of_link_[k];
    if (op < 0 || runtime < 0) continue;
    const LargeVector<uint32_t>& thread = thread_.empty() ? f_.track_ : thread_;
    if (thread[runtime] != thread[op]) {
      if (thread_.empty()) thread_ = f_.track_;
      thread_[runtime] = thread_[op];
    }
  }
}

}  // namespace profsh
