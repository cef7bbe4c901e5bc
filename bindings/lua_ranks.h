// What a Trace userdata keeps about a job's ranks (lua_ranks.cpp).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/load/rank_loader.h"
#include "engine/trace/trace.h"

struct lua_State;

namespace profsh::lua {

struct RankLoadInfo {
  std::vector<RankSource> ranks;
  RankAlignment align = RankAlignment::kMin;
  double residual_skew_median_us = -1, residual_skew_max_us = -1;
  size_t matched_collectives = 0;
};

struct RankPart {
  int32_t rank;
  std::shared_ptr<Trace> trace;
};

struct TraceHandle;

// t.ranks: per rank its number and, where `sources` has it, its file, offset (µs) and events;
// with an alignment, its name and the skew left (when collectives matched).
void PushRankTable(lua_State* L, const std::vector<int32_t>& ranks,
                   const std::vector<RankSource>& sources, const RankAlignment* align,
                   size_t matched_collectives, double skew_median_us, double skew_max_us);

// The rows of every rank, in rank order, with a rank column first where the rows have none.
AnalysisRows ConcatRanks(std::vector<AnalysisRows> results, const std::vector<RankPart>& parts);

// `analysis` on each rank's part of a multi-rank trace, concatenated (ConcatRanks); on the whole
// trace when it has one rank.
AnalysisRows PerRankRows(TraceHandle* h, const std::function<AnalysisRows(const Trace&)>& analysis);

}  // namespace profsh::lua
