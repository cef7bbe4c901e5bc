// Device work ↔ the runtime call that launched it (same correlation id) ↔ the operators and
// ranges with that call's External id. The ranges open on the call's track when it
// started are the model's (EventModel::EnclosingRanges).
//
// Every candidate is kept: a trace can repeat a correlation or an External id (two recordings
// joined, ids reused across processes), and the tools profsh follows resolve that differently.
// Each view picks its tool's rule with FirstCandidate or LastCandidate and says so:
//   - first in trace order: torch's tables (function_events: the first op or runtime call offered
//     for an id wins, as the dicts of _parse_kineto_results keep the first), HTA's views on
//     gpu_events (its runtime call of a correlation), nsys' stats and PyProf's kernel table
//     (nsys_stats, kernel_table);
//   - last in trace order: HTA's trace_diff (transform_correlation_to_index maps a correlation to
//     the last call that has it).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/analysis/model/event_ids.h"

namespace profsh {

// Members (indexes into one role's list) grouped by an id they carry, each group in trace order.
class IdGroups {
 public:
  IdGroups() = default;
  // Groups index k by ids[k]; kNoId is left out.
  explicit IdGroups(const std::vector<int64_t>& ids);
  // The group of an id, or kNoIndex.
  uint32_t GroupOf(int64_t id) const;
  std::span<const uint32_t> Members(uint32_t group) const {
    if (group == kNoIndex) return {};
    return std::span<const uint32_t>(members_).subspan(begin_[group],
                                                       begin_[group + 1] - begin_[group]);
  }
  size_t group_count() const { return ids_.size(); }

 private:
  // Correlations and External ids are mostly dense (1, 2, 3, ...): then a table by id replaces
  // the sort and the binary search.
  void GroupDense(const std::vector<int64_t>& ids, int64_t low, uint64_t span);
  uint64_t Offset(int64_t id) const {
    return static_cast<uint64_t>(id) - static_cast<uint64_t>(dense_low_);
  }

  std::vector<int64_t> ids_;     // ascending, one per group
  std::vector<uint32_t> begin_;  // group g's members: members_[begin_[g], begin_[g + 1])
  std::vector<uint32_t> members_;
  int64_t dense_low_ = 0;
  std::vector<uint32_t> group_at_;  // dense ids: the group of id dense_low_ + i, or kNoIndex
};

inline uint32_t FirstCandidate(std::span<const uint32_t> candidates) {
  return candidates.empty() ? kNoIndex : candidates.front();
}
inline uint32_t LastCandidate(std::span<const uint32_t> candidates) {
  return candidates.empty() ? kNoIndex : candidates.back();
}

class LaunchLinks {
 public:
  LaunchLinks() = default;
  explicit LaunchLinks(const EventIds& ids);

  // Runtime calls (indexes into EventIds::runtime) with device work k's correlation.
  std::span<const uint32_t> RuntimeCandidates(size_t work) const {
    return runtime_by_correlation_.Members(work_runtime_group_[work]);
  }
  // CPU ranges (indexes into EventIds::ranges) with device work k's External id.
  std::span<const uint32_t> RangeCandidatesOfWork(size_t work) const {
    return ranges_by_external_.Members(work_range_group_[work]);
  }
  // CPU ranges with runtime call r's External id.
  std::span<const uint32_t> RangeCandidatesOfRuntime(size_t runtime) const {
    return ranges_by_external_.Members(runtime_range_group_[runtime]);
  }
  // Runtime calls with a correlation id (in trace order), whatever device work has it.
  std::span<const uint32_t> RuntimeCallsWithCorrelation(int64_t correlation) const {
    return runtime_by_correlation_.Members(runtime_by_correlation_.GroupOf(correlation));
  }

 private:
  IdGroups runtime_by_correlation_, ranges_by_external_;
  std::vector<uint32_t> work_runtime_group_, work_range_group_, runtime_range_group_;
};

}  // namespace profsh
