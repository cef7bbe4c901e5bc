// What a Trace userdata keeps about a job's ranks (lua_ranks.cpp).
#pragma once

#include <memory>
#include <vector>

#include "engine/load/rank_loader.h"
#include "engine/trace/trace.h"

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

}  // namespace profsh::lua
