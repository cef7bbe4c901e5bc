// Interned call stacks. Every operator of a template shares its "Call stack" text, and backward
// ops take their forward op's stack, so stacks are stored once and events hold ids; grouping
// key_averages by the top frames compares frame ids, not text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace profsh {

// Lists of frame string ids, innermost frame first (torch's order); id 0 is the empty stack.
class StackTable {
 public:
  StackTable() { stacks_.emplace_back(); }
  uint32_t Intern(const std::vector<uint32_t>& frames);
  const std::vector<uint32_t>& Get(uint32_t id) const { return stacks_[id]; }
  size_t size() const { return stacks_.size(); }

 private:
  void Grow();
  std::vector<std::vector<uint32_t>> stacks_;
  std::vector<uint32_t> slots_ = std::vector<uint32_t>(64, 0);
};

}  // namespace profsh
