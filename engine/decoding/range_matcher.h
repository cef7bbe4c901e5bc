// Matching what opens and closes in a stream: push/pop levels per thread and domain (NVTX
// push/pop, ITT tasks, torch operators), start/end ranges by id across threads, ITT frames by
// domain and id. Knows nothing of traces: it hands back what matched, with the window each
// opening belongs to (a tag it keeps, given by the caller).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/stream/stream_codec.h"

namespace profsh {

// A push, ITT task or operator waiting for its pop.
struct OpenLevel {
  stream::StreamEvent begin;
  int window = -1;       // -1: outside every window (its pop is just matched)
  bool emitted = false;  // already cut at its window's end
};

// A start/end range whose both ends are known (or cut at its window's end).
struct MatchedRange {
  uint64_t begin_ticks = 0, end_ticks = 0;
  int window = -1;
  stream::StreamEvent start;
  bool cut = false;  // its end was not seen
};

class RangeMatcher {
 public:
  // --- push/pop levels ---
  void Push(int64_t tid, uint64_t domain, const stream::StreamEvent& e, int window) {
    levels_[Key(tid, domain)].push_back(OpenLevel{e, window, false});
  }
  // The innermost open level of (tid, domain), or nullptr.
  OpenLevel* Top(int64_t tid, uint64_t domain);
  std::optional<OpenLevel> Pop(int64_t tid, uint64_t domain);
  // Calls fn(tid, level) for every open level, outermost first per thread and domain.
  template <typename Fn>
  void ForEachOpen(Fn&& fn) {
    for (auto& [key, stack] : levels_) {
      for (OpenLevel& level : stack) fn(static_cast<int64_t>(key >> 16), level);
    }
  }
  // Removes and returns the open levels of `tid` (every domain), outermost first per domain.
  std::vector<OpenLevel> TakeThread(int64_t tid);
  std::vector<int64_t> ThreadsWithOpenLevels() const;

  // --- start/end ranges (an end may come before its start, from another thread's block) ---
  void Start(const stream::StreamEvent& e, int window);
  void End(uint64_t range_id, uint64_t ticks);
  // Every range of `window` still open: matched with an end seen earlier, or cut at `cut_ticks`.
  // Returns how many were cut.
  uint64_t CloseWindow(int window, uint64_t cut_ticks);
  // The matched ranges of `window`, taken out.
  std::vector<MatchedRange> TakeMatched(int window);
  // Ends whose start never came; forgotten by the call.
  uint64_t TakeUnknownEnds();

  // --- frames ---
  void FrameBegin(uint64_t domain, uint64_t frame_id, uint64_t ticks) {
    frames_[{domain, frame_id}].push_back(ticks);
  }
  // The begin of the innermost open frame, or nothing when none is open.
  std::optional<uint64_t> FrameEnd(uint64_t domain, uint64_t frame_id);

 private:
  static uint64_t Key(int64_t tid, uint64_t domain) {
    return static_cast<uint64_t>(tid) << 16 | domain;
  }
  struct OpenRange {
    stream::StreamEvent start;
    int window;
  };
  std::unordered_map<uint64_t, std::vector<OpenLevel>> levels_;  // (tid << 16 | domain)
  std::unordered_map<uint64_t, OpenRange> ranges_;
  std::unordered_map<uint64_t, uint64_t> early_ends_;  // id -> ticks
  std::vector<MatchedRange> matched_;
  std::map<std::pair<uint64_t, uint64_t>, std::vector<uint64_t>> frames_;
};

}  // namespace profsh
