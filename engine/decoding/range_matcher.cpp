#include "engine/decoding/range_matcher.h"

#include <algorithm>

namespace profsh {

OpenLevel* RangeMatcher::Top(int64_t tid, uint64_t domain) {
  auto it = levels_.find(Key(tid, domain));
  return it == levels_.end() || it->second.empty() ? nullptr : &it->second.back();
}

std::optional<OpenLevel> RangeMatcher::Pop(int64_t tid, uint64_t domain) {
  auto it = levels_.find(Key(tid, domain));
  if (it == levels_.end() || it->second.empty()) return std::nullopt;
  OpenLevel level = it->second.back();
  it->second.pop_back();
  return level;
}

std::vector<OpenLevel> RangeMatcher::TakeThread(int64_t tid) {
  std::vector<OpenLevel> out;
  for (auto& [key, stack] : levels_) {
    if (static_cast<int64_t>(key >> 16) != tid) continue;
    out.insert(out.end(), stack.begin(), stack.end());
    stack.clear();
  }
  return out;
}

std::vector<int64_t> RangeMatcher::ThreadsWithOpenLevels() const {
  std::vector<int64_t> tids;
  for (const auto& [key, stack] : levels_) {
    if (!stack.empty()) tids.push_back(static_cast<int64_t>(key >> 16));
  }
  return tids;
}

void RangeMatcher::Start(const stream::StreamEvent& e, int window) {
  if (window < 0) {
    ranges_.erase(e.range_id);  // outside every window: nothing of it is kept
    return;
  }
  ranges_[e.range_id] = OpenRange{e, window};
}

void RangeMatcher::End(uint64_t range_id, uint64_t ticks) {
  auto it = ranges_.find(range_id);
  if (it == ranges_.end()) {
    early_ends_[range_id] = ticks;
    return;
  }
  const OpenRange& r = it->second;
  matched_.push_back({r.start.ticks, std::max(ticks, r.start.ticks), r.window, r.start, false});
  ranges_.erase(it);
}

uint64_t RangeMatcher::CloseWindow(int window, uint64_t cut_ticks) {
  uint64_t cut = 0;
  for (auto it = ranges_.begin(); it != ranges_.end();) {
    const OpenRange& r = it->second;
    if (r.window != window) {
      ++it;
      continue;
    }
    auto end = early_ends_.find(it->first);
    if (end != early_ends_.end()) {
      matched_.push_back({r.start.ticks, end->second, window, r.start, false});
      early_ends_.erase(end);
    } else {
      matched_.push_back(
          {r.start.ticks, std::max(cut_ticks, r.start.ticks), window, r.start, true});
      ++cut;
    }
    it = ranges_.erase(it);
  }
  return cut;
}

std::vector<MatchedRange> RangeMatcher::TakeMatched(int window) {
  std::vector<MatchedRange> mine;
  auto split =
      std::stable_partition(matched_.begin(), matched_.end(),
                            [window](const MatchedRange& r) { return r.window != window; });
  mine.assign(split, matched_.end());
  matched_.erase(split, matched_.end());
  return mine;
}

uint64_t RangeMatcher::TakeUnknownEnds() {
  const uint64_t n = early_ends_.size();
  early_ends_.clear();
  return n;
}

std::optional<uint64_t> RangeMatcher::FrameEnd(uint64_t domain, uint64_t frame_id) {
  auto& stack = frames_[{domain, frame_id}];
  if (stack.empty()) return std::nullopt;
  const uint64_t begin = stack.back();
  stack.pop_back();
  return begin;
}

}  // namespace profsh
