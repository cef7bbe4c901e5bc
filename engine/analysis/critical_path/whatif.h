// What-if on a critical path graph: some kernels, operators or ranks made faster or removed, some
// synchronizations dropped, and the path found again on the same graph with the changed weights,
// without the trace being read again. docs/ANALYSIS.md ("What-if") gives the rules.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/critical_path/cross_rank.h"

namespace profsh {

struct WhatIfChange {
  enum class Target : uint8_t {
    kKernel,    // device work (kernels, copies, sets) whose name matches: its span on the device
    kOperator,  // CPU operators or annotations whose name matches: their span with everything
                // nested in them and the device work launched from inside them
    kSync,      // runtime calls whose name matches: the GPU->CPU waits ending at them (removed)
                // and their own span
    kRank,      // everything a rank does itself (not the time a collective runs after the last
                // rank arrives)
  };
  Target target = Target::kKernel;
  // Decides whether a name is one the change is about; asked once per distinct name.
  std::function<bool(std::string_view)> name_matches;
  // The rank the change is limited to (the rank kRank changes), or -1 for every rank.
  int32_t rank = -1;
  double scale = 1.0;   // the new weight over the old one; 0 when removed
  bool remove = false;  // kSync: drop its waits; otherwise the same as scale = 0
  std::string label;    // how the change was asked for, for messages
};

struct WhatIfResult {
  std::vector<int64_t> weights;  // the graph's edge weights after the changes
  CpPath path;                   // the longest path under them
  // The path with no change but the waits made to follow the GPU (WhatIfBaseWeights): what the
  // changed path is compared with.
  int64_t baseline_ns = 0;
  size_t edges_changed = 0;
  // Per change: how many edges it touched (a change that touched none is worth a warning).
  std::vector<size_t> edges_per_change;
};

// The weights a what-if starts from: the graph's, except that a runtime call that waits for the
// GPU (a synchronization edge ends at its end) keeps, of its own span, only the time after the
// work it waited for ended, so that its wait shrinks when that work ends earlier. The path's
// length is the graph's where the waits were as long as the trace shows.
std::vector<int64_t> WhatIfBaseWeights(const CpGraph& graph);

// The changed weights of `job`'s graph: every change applied to `start` (an earlier what-if's
// weights, or WhatIfBaseWeights when empty), scales multiplying.
Result<std::vector<int64_t>> WhatIfWeights(const CpGraph& graph, const JobLayout& job,
                                           const std::vector<WhatIfChange>& changes,
                                           std::span<const int64_t> start,
                                           std::vector<size_t>* edges_per_change);

// The weights and the longest path under them; `end_part` (kJobNoPart for anywhere) keeps the
// path ending on one rank, as the path it is compared with does. `start`: as WhatIfWeights'.
Result<WhatIfResult> WhatIf(const CpGraph& graph, const JobLayout& job,
                            const std::vector<WhatIfChange>& changes,
                            uint16_t end_part = kJobNoPart, std::span<const int64_t> start = {});

}  // namespace profsh
