#include "engine/analysis/model/launch_links.h"

#include <algorithm>
#include <utility>

namespace profsh {

IdGroups::IdGroups(const std::vector<int64_t>& ids) {
  members_.reserve(ids.size());
  // Correlations and External ids mostly grow in trace order: sort only when they do not.
  bool ascending = true;
  for (size_t k = 0; k < ids.size(); ++k) {
    if (ids[k] == kNoId) continue;
    ascending = ascending && (members_.empty() || ids[members_.back()] <= ids[k]);
    members_.push_back(static_cast<uint32_t>(k));
  }
  if (!ascending) {
    // Each group keeps trace order, which FirstCandidate and LastCandidate rely on: sorting
    // (id, trace position) pairs gives a stable sort's order without its indirect compares.
    std::vector<std::pair<int64_t, uint32_t>> keyed;
    keyed.reserve(members_.size());
    for (uint32_t k : members_) keyed.emplace_back(ids[k], k);
    std::sort(keyed.begin(), keyed.end());
    for (size_t m = 0; m < keyed.size(); ++m) members_[m] = keyed[m].second;
  }
  for (size_t m = 0; m < members_.size(); ++m) {
    const int64_t id = ids[members_[m]];
    if (ids_.empty() || ids_.back() != id) {
      ids_.push_back(id);
      begin_.push_back(static_cast<uint32_t>(m));
    }
  }
  begin_.push_back(static_cast<uint32_t>(members_.size()));
}

uint32_t IdGroups::GroupOf(int64_t id) const {
  if (id == kNoId) return kNoIndex;
  auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
  return it == ids_.end() || *it != id ? kNoIndex : static_cast<uint32_t>(it - ids_.begin());
}

LaunchLinks::LaunchLinks(const EventIds& ids)
    : runtime_by_correlation_(ids.runtime.correlation), ranges_by_external_(ids.ranges.external) {
  const DeviceWorkIds& work = ids.device_work;
  work_runtime_group_.resize(work.size());
  work_range_group_.resize(work.size());
  for (size_t k = 0; k < work.size(); ++k) {
    work_runtime_group_[k] = runtime_by_correlation_.GroupOf(work.correlation[k]);
    work_range_group_[k] = ranges_by_external_.GroupOf(work.external[k]);
  }
  runtime_range_group_.resize(ids.runtime.size());
  for (size_t r = 0; r < ids.runtime.size(); ++r)
    runtime_range_group_[r] = ranges_by_external_.GroupOf(ids.runtime.external[r]);
}

}  // namespace profsh
