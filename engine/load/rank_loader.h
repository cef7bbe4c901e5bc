// Every trace of a distributed job in one Trace (profsh.load_ranks): the rank of each file, its
// processes renamed "rank r: ..." and labelled "rank r" (so that every analysis can tell the
// ranks apart, and the Chrome export groups them), and the ranks' clocks aligned.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/load/rank_alignment.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

struct RankLoadOptions {
  std::vector<std::string> paths;
  RankAlignment align = RankAlignment::kMin;
  // Ranks of files that name none (no distributedInfo.rank, no rank-N in the name), by path or
  // by file name.
  std::map<std::string, int64_t> ranks;
  bool allow_missing = false;  // ranks 0..max need not all be there
  unsigned threads = 0;        // files loaded at once; 0: one per core (at most 8)
};

struct RankSource {
  int32_t rank;
  std::string path;
  int64_t offset_ns = 0;  // added to the rank's times by the alignment
  size_t events = 0;
  // The file's own clock: its origin, and how far its times moved to the job's origin (before
  // the alignment), so that a rank can be analysed alone on its own clock again.
  int64_t origin_ns = 0;
  bool has_origin = false;
  int64_t shift_ns = 0;
};

struct LoadedRanks {
  std::unique_ptr<Trace> trace;
  std::vector<RankSource> ranks;  // by rank
  RankAlignment align = RankAlignment::kMin;
  // After alignment, the spread of matched collectives' ends across ranks (µs); -1 without
  // collectives.
  double residual_skew_median_us = -1, residual_skew_max_us = -1;
  size_t matched_collectives = 0;
};

// A folder (its .json, .json.gz and .profsh files) or a glob pattern, as a sorted list of
// files; an error names the pattern that matched nothing.
Result<std::vector<std::string>> ResolveRankPaths(const std::string& dir_or_glob);

// The rank in a file name: rank-N, rank_N or rankN (any case); -1 when none.
int64_t RankInFileName(const std::string& path);

// An error when ranks 0..max are not all in `files` (rank -> path): the missing ones as ranges
// ("2-5"), then every file with its rank; `override` says what allow_missing=true does.
Status CheckNoRanksMissing(const std::map<int64_t, std::string>& files,
                           const std::string& override);

Result<LoadedRanks> LoadRanks(const RankLoadOptions& options);

// One rank's events of a multi-rank trace as a trace of their own, with that rank as its
// distributedInfo; on the rank's own clock again when `source` (load_ranks' record of its file)
// is given, so that its numbers are those of its file alone (HTA's rounding of microseconds
// depends on the clock).
Result<std::shared_ptr<Trace>> RankPartTrace(const Trace& whole,
                                             const std::vector<int32_t>& rank_of_track,
                                             int32_t rank, const RankSource* source);

}  // namespace profsh
