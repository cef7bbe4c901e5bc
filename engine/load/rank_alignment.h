// The alignment of a job's rank clocks from each rank's anchors alone (its first event, its
// ProfilerStep starts, its collectives' ends), so that a merged trace (load_ranks) and a job of
// summaries (load_summaries) align the same way. docs/ANALYSIS.md ("Many ranks") defines the
// modes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/ranks.h"
#include "engine/util/result.h"

namespace profsh {

enum class RankAlignment {
  kAbsolute,    // "abs": the times as recorded (each rank's own clock)
  kMin,         // "min": every rank starts at the same instant (HTA's alignment)
  kStep,        // "step": the first ProfilerStep every rank has starts at the same instant
  kCollective,  // "collective": matched collectives end at the same instant (median)
};
Result<RankAlignment> ParseRankAlignment(const std::string& name);
std::string RankAlignmentName(RankAlignment a);

// One rank's anchors, on the job's clock before the alignment (ns).
struct RankAnchors {
  int32_t rank = 0;
  std::optional<int64_t> first_event;      // the start of its first non-metadata event
  std::map<int64_t, int64_t> step_starts;  // ProfilerStep#N -> its earliest start
};

// The offset (ns) added to each rank's times, by rank. `ranks` are in rank order, the lowest
// the reference; `calls` are every rank's collectives (for "collective"). An error says why
// the mode cannot align these ranks.
Result<std::map<int32_t, int64_t>> AlignmentOffsets(RankAlignment mode,
                                                    const std::vector<RankAnchors>& ranks,
                                                    const std::vector<CollectiveCall>& calls);

// How far apart matched collectives end (max - min over ranks, µs): the skew an alignment
// leaves. `calls` on the aligned clock.
struct ResidualSkew {
  size_t matched = 0;
  double median_us = -1, max_us = -1;  // -1 without matched collectives
};
ResidualSkew ResidualCollectiveSkew(const std::vector<CollectiveCall>& calls, size_t rank_count);

}  // namespace profsh
