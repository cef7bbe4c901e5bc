#include "engine/analysis/model/launch_links.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace profsh {

IdGroups::IdGroups(const std::vector<int64_t>& ids) {
  members_.reserve(ids.size());
  int64_t low = INT64_MAX, high = INT64_MIN;
  bool ascending = true;
  for (size_t k = 0; k < ids.size(); ++k) {
    if (ids[k] == kNoId) continue;
    ascending = ascending && (members_.empty() || ids[members_.back()] <= ids[k]);
    low = std::min(low, ids[k]);
    high = std::max(high, ids[k]);
    members_.push_back(static_cast<uint32_t>(k));
  }
  if (members_.empty()) {
    begin_.push_back(0);
    return;
  }
  // Unsigned: ids may span the whole int64 range.
  const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  if (span <= 4 * members_.size() + 1024) {
    GroupDense(ids, low, span);
    return;
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

void IdGroups::GroupDense(const std::vector<int64_t>& ids, int64_t low, uint64_t span) {
  dense_low_ = low;
  group_at_.assign(span + 1, 0);  // first a count per id, then its group
  for (uint32_t k : members_) ++group_at_[Offset(ids[k])];
  begin_.reserve(members_.size() + 1);
  for (uint64_t offset = 0; offset <= span; ++offset) {
    const uint32_t count = group_at_[offset];
    if (count == 0) {
      group_at_[offset] = kNoIndex;
      continue;
    }
    const uint32_t first = begin_.empty() ? 0 : begin_.back();
    group_at_[offset] = static_cast<uint32_t>(ids_.size());
    ids_.push_back(static_cast<int64_t>(static_cast<uint64_t>(low) + offset));
    begin_.push_back(first + count);  // the group's end for now: its begin once placed
  }
  // Place members by their group's end, from the last in trace order down: each group ends up
  // in trace order and begin_[g] at its first member.
  const std::vector<uint32_t> in_trace_order = std::move(members_);
  members_.assign(in_trace_order.size(), 0);
  for (size_t m = in_trace_order.size(); m-- > 0;) {
    const uint32_t k = in_trace_order[m];
    members_[--begin_[group_at_[Offset(ids[k])]]] = k;
  }
  begin_.push_back(static_cast<uint32_t>(members_.size()));
}

uint32_t IdGroups::GroupOf(int64_t id) const {
  if (id == kNoId) return kNoIndex;
  if (!group_at_.empty()) {
    const uint64_t offset = Offset(id);
    return offset < group_at_.size() ? group_at_[offset] : kNoIndex;
  }
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
