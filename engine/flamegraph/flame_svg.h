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
  double font_width = 0.59;        // average glyph width relative to the font size
  double min_width = 0.1;          // frames narrower than this are left out...
  bool min_width_percent = false;  // ...in pixels, or in percent of the total
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
