// Merges sorted folded stacks into flamegraph frames. Stacks are walked in order with the stack
// of open frames; a frame closes when a stack leaves it, and is kept only if it is at least
// `min_value` wide, so memory grows with the frames drawn, not with the stacks read (a million
// unique stacks give a few thousand frames at 1200 pixels).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/flamegraph/folded_stacks.h"

namespace profsh {

struct FlameFrame {
  std::string_view name;  // empty for the root ("all")
  uint32_t depth = 0;     // 0 is the root
  double start = 0;       // in counts from the left edge
  double value = 0;       // width in counts
  double delta = 0;       // differential: the change of the frame's own (self) value
};

struct FlameLayout {
  std::vector<FlameFrame> frames;  // sorted by depth, then start
  double total = 0;
  double max_delta = 0;  // largest |change| of any one stack (colour scale)
  uint32_t max_depth = 0;
  bool differential = false;
};

// `stacks` must be sorted (FoldedStacks::Sort). Frames narrower than min_value are dropped.
FlameLayout LayoutFlames(const FoldedStacks& stacks, double min_value);

}  // namespace profsh
