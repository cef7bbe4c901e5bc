#include "engine/analysis/function_events/stack_table.h"

#include "engine/util/hash.h"

namespace profsh {

uint32_t StackTable::Intern(const std::vector<uint32_t>& frames) {
  if (frames.empty()) return 0;
  uint64_t h = HashBytes(reinterpret_cast<const char*>(frames.data()), frames.size() * 4);
  size_t mask = slots_.size() - 1;
  size_t pos = h & mask;
  while (slots_[pos] != 0) {
    if (stacks_[slots_[pos]] == frames) return slots_[pos];
    pos = (pos + 1) & mask;
  }
  uint32_t id = static_cast<uint32_t>(stacks_.size());
  stacks_.push_back(frames);
  slots_[pos] = id;
  if (stacks_.size() * 2 > slots_.size()) Grow();
  return id;
}

void StackTable::Grow() {
  std::vector<uint32_t> bigger(slots_.size() * 2, 0);
  size_t mask = bigger.size() - 1;
  for (uint32_t id = 1; id < stacks_.size(); ++id) {
    const auto& f = stacks_[id];
    size_t pos = HashBytes(reinterpret_cast<const char*>(f.data()), f.size() * 4) & mask;
    while (bigger[pos] != 0) pos = (pos + 1) & mask;
    bigger[pos] = id;
  }
  slots_.swap(bigger);
}

}  // namespace profsh
