#include "engine/flamegraph/flame_layout.h"

#include <algorithm>
#include <cmath>

namespace profsh {

FlameLayout LayoutFlames(const FoldedStacks& stacks, double min_value) {
  FlameLayout layout;
  layout.differential = stacks.differential();
  struct Open {
    uint32_t frame;
    double start;
    double delta;
  };
  std::vector<Open> open;
  open.push_back({UINT32_MAX, 0, 0});  // the root
  double time = 0;
  auto close = [&](size_t depth) {
    const Open& o = open[depth];
    double value = time - o.start;
    if (value >= min_value && value > 0) {
      std::string_view name = depth == 0 ? std::string_view() : stacks.frame_name(o.frame);
      layout.frames.push_back({name, static_cast<uint32_t>(depth), o.start, value, o.delta});
      layout.max_depth = std::max(layout.max_depth, static_cast<uint32_t>(depth));
    }
  };
  for (size_t i = 0; i < stacks.size(); ++i) {
    std::span<const uint32_t> frames = stacks.frames(i);
    size_t same = 0;
    while (same < frames.size() && same + 1 < open.size() && open[same + 1].frame == frames[same])
      ++same;
    while (open.size() > same + 1) {
      close(open.size() - 1);
      open.pop_back();
    }
    for (size_t f = same; f < frames.size(); ++f) open.push_back({frames[f], time, 0});
    if (layout.differential) {
      double delta = stacks.count(i) - stacks.before(i);
      open.back().delta += delta;
      layout.max_delta = std::max(layout.max_delta, std::fabs(delta));
    }
    time += stacks.count(i);
  }
  while (!open.empty()) {
    close(open.size() - 1);
    open.pop_back();
  }
  layout.total = time;
  std::sort(layout.frames.begin(), layout.frames.end(),
            [](const FlameFrame& a, const FlameFrame& b) {
              return a.depth != b.depth ? a.depth < b.depth : a.start < b.start;
            });
  return layout;
}

}  // namespace profsh
