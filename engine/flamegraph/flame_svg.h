// Interactive flamegraph SVGs (flamegraph.pl's look and features, profsh's own code): frames
// sized by value, coloured by a palette or, for differential profiles, by growth (red) and
// shrinkage (blue); zoom, search and tooltips from an embedded script.
#pragma once

#include <string>
#include <vector>

#include "engine/flamegraph/flame_layout.h"
#include "engine/flamegraph/folded_stacks.h"
#include "engine/util/result.h"

namespace profsh {

struct FlameOptions {
  std::string title;  // default "Flame Graph" ("Icicle Graph" when reversed)
  std::string subtitle;
  int width = 1200;  // pixels
  int frame_height = 16;
  double font_size = 12;
  double font_width = 0.59;  // average glyph width relative to the font size
  // Frames narrower than this are left out, in pixels or in percent of the total. flamegraph.pl
  // keeps everything down to 0.1 pixel; a deep stack of hairlines (Python's import machinery at
  // 0.1 % of a training run: 104 frames) then sets the graph's height and leaves its first
  // screen empty. 0.2 % of the total is under 3 pixels at the default width.
  double min_width = 0.2;
  bool min_width_percent = true;
  std::string colors = "hot";
  bool reverse = false;  // an icicle graph: roots at the top
  std::string count_name = "samples";
  bool negate = false;  // differential: swap the meaning of red and blue
};

const std::vector<std::string>& FlamePalettes();

struct FlameSummary {
  size_t stacks = 0;
  size_t ignored_lines = 0;
  size_t frames_drawn = 0;
  double total = 0;
};

// Sorts `stacks`, lays them out and draws the SVG into `*svg`.
Result<FlameSummary> RenderFlamegraph(FoldedStacks& stacks, const FlameOptions& options,
                                      std::string* svg);
// The same, written atomically to `path`.
Result<FlameSummary> WriteFlamegraph(FoldedStacks& stacks, const FlameOptions& options,
                                     const std::string& path);

}  // namespace profsh
