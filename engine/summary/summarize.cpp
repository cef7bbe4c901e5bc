#include "engine/summary/summarize.h"

#include <filesystem>

#include "engine/analysis/ranks.h"
#include "engine/load/rank_loader.h"
#include "engine/load/trace_loader.h"
#include "engine/summary/summary_writer.h"

namespace profsh {

Result<std::pair<int32_t, std::string>> SummaryRank(const Trace& trace, const std::string& path,
                                                    std::optional<int64_t> given) {
  int64_t rank = DistributedRank(trace).value_or(-1);
  std::string from = "distributedInfo";
  if (rank < 0) {
    rank = RankInFileName(path);
    from = "file name";
  }
  if (rank < 0 && given) {
    rank = *given;
    from = "option";
  }
  if (rank < 0 || rank > INT32_MAX) {
    return Error{path +
                 ": cannot tell its rank (no distributedInfo.rank in the trace, no rank-N in its "
                 "name); give it with --rank N"};
  }
  return std::make_pair(static_cast<int32_t>(rank), from);
}

Result<int32_t> SummarizeTrace(const Trace& trace, const std::string& path, const std::string& out,
                               const SummarizeOptions& options) {
  auto rank = SummaryRank(trace, path, options.rank);
  if (!rank.ok()) return rank.error();
  RankSummaryOptions o;
  o.rank = rank->first;
  o.rank_from = rank->second;
  o.path = path;
  o.top_operators = options.top_operators;
  o.top_kernels = options.top_kernels;
  if (Status s = WriteRankSummary(ComputeRankSummary(trace, o), out); !s.ok())
    return Error{s.message()};
  return rank->first;
}

Result<int32_t> SummarizeTraceFile(const std::string& path, const std::string& out,
                                   const SummarizeOptions& options) {
  auto trace = LoadTrace(path);
  if (!trace.ok()) return trace.error();
  return SummarizeTrace(*trace.value(), path, out, options);
}

std::vector<int32_t> LabelledRanks(const Trace& trace) {
  return RanksOf(RankOfTrack(trace));
}

Result<std::vector<int32_t>> SummarizeEachRank(const Trace& trace, const std::string& trace_path,
                                               const std::string& folder,
                                               const SummarizeOptions& options,
                                               const std::string& rank_from) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec || !std::filesystem::is_directory(folder))
    return Error{folder + ": cannot make this folder for the summaries" +
                 (ec ? ": " + ec.message() : std::string())};
  const std::vector<int32_t> rank_of_track = RankOfTrack(trace);
  const std::vector<int32_t> ranks = RanksOf(rank_of_track);
  auto summarize = [&](const Trace& t, int32_t rank) -> Status {
    RankSummaryOptions o;
    o.rank = rank;
    o.rank_from = rank_from;
    o.path = trace_path;
    o.top_operators = options.top_operators;
    o.top_kernels = options.top_kernels;
    const std::string out = (std::filesystem::path(folder) / SummaryFileName(rank)).string();
    return WriteRankSummary(ComputeRankSummary(t, o), out);
  };
  if (ranks.size() < 2) {
    const int32_t rank = ranks.empty() ? 0 : ranks.front();
    if (Status s = summarize(trace, rank); !s.ok()) return Error{s.message()};
    return std::vector<int32_t>{rank};
  }
  for (int32_t rank : ranks) {
    auto part = RankPartTrace(trace, rank_of_track, rank, nullptr);
    if (!part.ok()) return part.error();
    if (Status s = summarize(*part.value(), rank); !s.ok()) return Error{s.message()};
  }
  return ranks;
}

std::string SummaryFileName(int32_t rank) {
  return "rank-" + std::to_string(rank) + ".summary.sqlite";
}

}  // namespace profsh
