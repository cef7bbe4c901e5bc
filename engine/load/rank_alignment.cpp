#include "engine/load/rank_alignment.h"

#include <algorithm>

namespace profsh {

Result<RankAlignment> ParseRankAlignment(const std::string& name) {
  if (name == "abs") return RankAlignment::kAbsolute;
  if (name == "min") return RankAlignment::kMin;
  if (name == "step") return RankAlignment::kStep;
  if (name == "collective") return RankAlignment::kCollective;
  return Error{"unknown alignment '" + name + "' (abs, min, step or collective expected)"};
}

std::string RankAlignmentName(RankAlignment a) {
  switch (a) {
    case RankAlignment::kAbsolute:
      return "abs";
    case RankAlignment::kMin:
      return "min";
    case RankAlignment::kStep:
      return "step";
    case RankAlignment::kCollective:
      break;
  }
  return "collective";
}

namespace {

double MedianOf(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? static_cast<double>(v[n / 2]) : (static_cast<double>(v[n / 2 - 1]) + v[n / 2]) / 2;
}

}  // namespace

Result<std::map<int32_t, int64_t>> AlignmentOffsets(RankAlignment mode,
                                                    const std::vector<RankAnchors>& ranks,
                                                    const std::vector<CollectiveCall>& calls) {
  std::map<int32_t, int64_t> offset;
  for (const RankAnchors& r : ranks) offset[r.rank] = 0;
  if (ranks.empty()) return offset;
  const RankAnchors& reference = ranks.front();
  switch (mode) {
    case RankAlignment::kAbsolute:
      break;
    case RankAlignment::kMin:
      for (const RankAnchors& r : ranks) {
        if (r.first_event && reference.first_event)
          offset[r.rank] = *reference.first_event - *r.first_event;
      }
      break;
    case RankAlignment::kStep: {
      int64_t common = -1;
      for (const auto& [step, ts] : reference.step_starts) {
        bool everywhere = true;
        for (const RankAnchors& r : ranks) everywhere = everywhere && r.step_starts.count(step) > 0;
        if (everywhere) {
          common = step;
          break;
        }
      }
      if (common < 0) return Error{"align=\"step\": no ProfilerStep#N is in every rank's trace"};
      for (const RankAnchors& r : ranks)
        offset[r.rank] = reference.step_starts.at(common) - r.step_starts.at(common);
      break;
    }
    case RankAlignment::kCollective: {
      const auto matched = MatchedCollectiveEnds(calls, ranks.size());
      if (matched.empty())
        return Error{
            "align=\"collective\": no collective was called by every rank (no NCCL "
            "kernels, record_param_comms, gloo: or nccl: operators to match)"};
      for (const RankAnchors& r : ranks) {
        std::vector<int64_t> d;
        for (const auto& ends : matched) d.push_back(ends.at(reference.rank) - ends.at(r.rank));
        offset[r.rank] = static_cast<int64_t>(MedianOf(d));
      }
      break;
    }
  }
  return offset;
}

ResidualSkew ResidualCollectiveSkew(const std::vector<CollectiveCall>& calls, size_t rank_count) {
  ResidualSkew out;
  const auto matched = MatchedCollectiveEnds(calls, rank_count);
  out.matched = matched.size();
  if (matched.empty()) return out;
  std::vector<int64_t> spread;
  for (const auto& ends : matched) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& [r, e] : ends) {
      lo = std::min(lo, e);
      hi = std::max(hi, e);
    }
    spread.push_back(hi - lo);
  }
  out.median_us = MedianOf(spread) / 1000.0;
  out.max_us = static_cast<double>(*std::max_element(spread.begin(), spread.end())) / 1000.0;
  return out;
}

}  // namespace profsh
