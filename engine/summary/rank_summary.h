// One rank's summary, computed from its trace: what the job-wide analyses need (the collectives,
// the clock anchors of every alignment load_ranks offers, the per-rank breakdowns as the engine
// computes them) and per-step top operators and kernels, in plain structs. summary_writer.h
// writes it as SQLite (summary_schema.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/analysis/ranks.h"
#include "engine/trace/trace.h"

namespace profsh {

struct RankSummaryOptions {
  int32_t rank = 0;
  std::string rank_from;  // how the rank was found: "distributedInfo", "file name", "option"
  std::string path;       // the trace file, as given
  size_t top_operators = 20, top_kernels = 20;  // per step
};

struct SummaryStep {
  int64_t step;
  int64_t start_ns, end_ns;
  int64_t operators = 0, kernels = 0;  // distinct names in the step (before the top N)
};

struct SummaryCollective {
  CollectiveSource source;
  CollectiveCall call;
  std::optional<int64_t> in_bytes, out_bytes;
  std::optional<int64_t> step;  // the ProfilerStep the call starts in
};

struct SummaryTopEntry {
  int64_t step;
  int64_t place;  // 1: the most time
  std::string name;
  int64_t count;
  double total_us, max_us;
};

struct RankSummary {
  RankSummaryOptions options;
  std::string format;
  size_t events = 0;  // as load_ranks counts them (without the process name/labels/sort events)
  int64_t origin_ns = 0;
  bool has_origin = false;
  std::optional<int64_t> first_event_ns;                  // the earliest non-metadata event
  std::optional<std::pair<int64_t, int64_t>> first_step;  // number, start (ns)
  std::optional<std::string> distributed_info;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<SummaryStep> steps;  // by step number
  std::vector<SummaryCollective> collectives;
  std::vector<SummaryTopEntry> step_operators, step_kernels;
  // The rank's rows of t:temporal_breakdown() (and {by_step=true}), t:comm_comp_overlap(),
  // t:step_breakdown() and its .average, by analysis name.
  std::vector<std::pair<std::string, AnalysisRows>> analyses;
};

RankSummary ComputeRankSummary(const Trace& trace, const RankSummaryOptions& options);

}  // namespace profsh
