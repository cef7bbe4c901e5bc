#include "engine/summary/summary_job.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "engine/io/paths.h"
#include "engine/summary/summary_threads.h"

namespace profsh {

namespace {

std::string RankName(const LoadedSummary& s) {
  return "rank " + std::to_string(s.summary.options.rank) + " (" + s.path + ")";
}

// What to do about a table a summary lacks.
std::string HowToGet(const std::string& table) {
  return "run `profsh summarize` of this profsh on the rank's trace again (it writes table " +
         table + ")";
}

// An error naming the first summary that lacks `table`, what it lacks and how to get it; ok when
// every summary has it.
Status Require(const SummaryJob& job, const std::string& table, const std::string& analysis) {
  for (const LoadedSummary& s : job.summaries) {
    auto it = s.unavailable.find(table);
    if (it != s.unavailable.end())
      return Error{analysis + ": " + RankName(s) + ": " + it->second + "; " + HowToGet(table)};
  }
  return Status::Ok();
}

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double StepUs(const SummaryStep& s) {
  return static_cast<double>(s.end_ns - s.start_ns) / 1000.0;
}

// Every step-based analysis needs the steps table, and some rank with steps.
Status RequireSteps(const SummaryJob& job, const std::string& analysis) {
  if (Status s = Require(job, "steps", analysis); !s.ok()) return s;
  for (const LoadedSummary& s : job.summaries)
    if (!s.summary.steps.empty()) return Status::Ok();
  return Error{analysis +
               ": no rank has ProfilerStep#N steps (every summary's table steps is empty): "
               "record the job with torch.profiler and call prof.step() each iteration"};
}

std::string WithoutSteps(const SummaryJob& job) {
  std::string ranks;
  for (const LoadedSummary& s : job.summaries) {
    if (s.summary.steps.empty())
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(s.summary.options.rank);
  }
  return ranks.empty() ? "" : "ranks without ProfilerStep#N steps, left out: " + ranks;
}

}  // namespace

Result<std::vector<std::string>> ResolveSummaryPaths(const std::string& dir_or_glob) {
  // A dot file is a summary still being written (profsh summarize's staging name).
  return FilesOfFolderOrGlob(
      dir_or_glob,
      [](const std::string& name) { return name.ends_with(".sqlite") && !name.starts_with("."); },
      "no summaries (.sqlite files) in this folder (profsh summarize TRACE... -o " + dir_or_glob +
          " writes them)");
}

Result<SummaryJob> LoadSummaryJob(const SummaryJobOptions& options) {
  if (options.paths.empty()) return Error{"load_summaries: no summary files given"};
  SummaryJob job;
  job.align = options.align;
  std::map<int64_t, std::string> seen;  // rank -> path
  int64_t job_origin = 0;
  // Files are read on a few threads (each its own SQLite connection), then taken in order.
  // What every job-wide analysis needs only: the stored analyses are read when asked for.
  std::vector<std::optional<Result<LoadedSummary>>> files(options.paths.size());
  Status read_all = ForEachFile(files.size(), [&](size_t k) {
    try {
      files[k] = ReadRankSummary(options.paths[k], {.top_entries = false, .analyses = false});
    } catch (const std::exception& e) {
      files[k] = Result<LoadedSummary>(Error{options.paths[k] + ": " + e.what()});
    }
  });
  if (!read_all.ok()) return Error{"load_summaries: " + read_all.message()};
  for (size_t k = 0; k < options.paths.size(); ++k) {
    Result<LoadedSummary>& read = *files[k];
    if (!read.ok()) return read.error();
    const RankSummary& s = read->summary;
    const int32_t rank = s.options.rank;
    auto [it, fresh] = seen.emplace(rank, options.paths[k]);
    if (!fresh)
      return Error{"rank " + std::to_string(rank) + " twice: " + it->second + " and " +
                   options.paths[k]};
    // As load_ranks: times relative to the first file's origin.
    const int64_t origin = s.has_origin ? s.origin_ns : 0;
    if (k == 0) job_origin = origin;
    job.ranks.push_back(RankSource{rank, options.paths[k], 0, s.events, s.origin_ns, s.has_origin,
                                   origin - job_origin});
    job.summaries.push_back(std::move(read.value()));
  }
  if (!options.allow_missing) {
    if (Status s = CheckNoRanksMissing(seen, "reduces them anyway"); !s.ok())
      return Error{s.message()};
  }
  std::vector<size_t> order(job.ranks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return job.ranks[a].rank < job.ranks[b].rank; });
  {
    std::vector<LoadedSummary> summaries;
    std::vector<RankSource> ranks;
    for (size_t i : order) {
      summaries.push_back(std::move(job.summaries[i]));
      ranks.push_back(job.ranks[i]);
    }
    job.summaries = std::move(summaries);
    job.ranks = std::move(ranks);
  }

  // Anchors and collectives on the job's clock before the alignment.
  std::vector<RankAnchors> anchors;
  CollectiveSource best = CollectiveSource::kNone;
  bool all_collectives = true;
  for (size_t k = 0; k < job.summaries.size(); ++k) {
    const RankSummary& s = job.summaries[k].summary;
    const int64_t shift = job.ranks[k].shift_ns;
    RankAnchors a;
    a.rank = s.options.rank;
    if (s.first_event_ns) a.first_event = *s.first_event_ns + shift;
    for (const SummaryStep& step : s.steps) a.step_starts[step.step] = step.start_ns + shift;
    anchors.push_back(std::move(a));
    all_collectives = all_collectives && !job.summaries[k].unavailable.count("collectives");
    for (const SummaryCollective& c : s.collectives) {
      if (best == CollectiveSource::kNone || c.source < best) best = c.source;
    }
  }
  for (size_t k = 0; k < job.summaries.size(); ++k) {
    for (const SummaryCollective& c : job.summaries[k].summary.collectives) {
      if (c.source != best) continue;
      CollectiveCall call = c.call;
      call.ts += job.ranks[k].shift_ns;
      call.end += job.ranks[k].shift_ns;
      job.calls.push_back(std::move(call));
    }
  }
  if (options.align == RankAlignment::kStep) {
    if (Status s = Require(job, "steps", "align=\"step\""); !s.ok()) return Error{s.message()};
  }
  if (options.align == RankAlignment::kCollective) {
    if (Status s = Require(job, "collectives", "align=\"collective\""); !s.ok())
      return Error{s.message()};
  }
  auto offsets = AlignmentOffsets(options.align, anchors, job.calls);
  if (!offsets.ok()) return offsets.error();
  for (RankSource& r : job.ranks) r.offset_ns = offsets.value()[r.rank];
  for (CollectiveCall& c : job.calls) {
    c.ts += offsets.value()[c.rank];
    c.end += offsets.value()[c.rank];
  }
  if (all_collectives) {
    job.skew = ResidualCollectiveSkew(job.calls, job.ranks.size());
  } else {
    job.notes.push_back(
        "the skew left after alignment is unknown: a summary has no table collectives");
  }
  return job;
}

Result<CollectiveAnalysis> JobCollectives(const SummaryJob& job) {
  if (Status s = Require(job, "collectives", "collectives"); !s.ok()) return Error{s.message()};
  std::vector<int32_t> ranks;
  for (const RankSource& r : job.ranks) ranks.push_back(r.rank);
  return AnalyzeCollectiveCalls(job.calls, ranks, kNoCollectivesNote);
}

Result<AnalysisRows> JobAnalysis(const SummaryJob& job, const std::string& analysis) {
  if (Status s = Require(job, "analyses", analysis); !s.ok()) return Error{s.message()};
  // Read from the files now (LoadSummaryJob leaves them there), a few at a time.
  std::vector<std::optional<Result<std::optional<AnalysisRows>>>> read(job.summaries.size());
  Status read_all = ForEachFile(read.size(), [&](size_t k) {
    try {
      read[k] = ReadSummaryAnalysis(job.summaries[k].path, analysis);
    } catch (const std::exception& e) {
      read[k] = Result<std::optional<AnalysisRows>>(Error{job.summaries[k].path + ": " + e.what()});
    }
  });
  if (!read_all.ok()) return Error{analysis + ": " + read_all.message()};
  std::vector<AnalysisRows> results;
  std::vector<int32_t> ranks;
  for (size_t k = 0; k < read.size(); ++k) {
    const LoadedSummary& s = job.summaries[k];
    Result<std::optional<AnalysisRows>>& rows = *read[k];
    if (!rows.ok()) return Error{analysis + ": " + rows.error().message};
    if (!rows->has_value())
      return Error{analysis + ": " + RankName(s) + ": table analyses has no '" + analysis +
                   "' rows; " + HowToGet("analyses")};
    results.push_back(std::move(**rows));
    ranks.push_back(s.summary.options.rank);
  }
  return ConcatRankRows(std::move(results), ranks);
}

Result<AnalysisRows> JobStepTimes(const SummaryJob& job) {
  if (Status s = RequireSteps(job, "step_times"); !s.ok()) return Error{s.message()};
  AnalysisRows out;
  out.columns = {"rank", "step", "start", "duration"};
  for (size_t k = 0; k < job.summaries.size(); ++k) {
    const int64_t moved = job.ranks[k].shift_ns + job.ranks[k].offset_ns;
    for (const SummaryStep& s : job.summaries[k].summary.steps) {
      out.rows.push_back({Cell::Int(job.ranks[k].rank), Cell::Int(s.step),
                          Cell::Fixed(static_cast<double>(s.start_ns + moved) / 1000.0, 3),
                          Cell::Fixed(StepUs(s), 3)});
    }
  }
  if (std::string note = WithoutSteps(job); !note.empty()) out.notes.push_back(note);
  return out;
}

Result<AnalysisRows> SlowestRanksPerStep(const SummaryJob& job) {
  if (Status s = RequireSteps(job, "slowest_ranks"); !s.ok()) return Error{s.message()};
  std::map<int64_t, std::vector<std::pair<double, int32_t>>> by_step;  // duration, rank
  for (const LoadedSummary& s : job.summaries) {
    for (const SummaryStep& step : s.summary.steps)
      by_step[step.step].emplace_back(StepUs(step), s.summary.options.rank);
  }
  AnalysisRows out;
  out.columns = {"step",   "ranks",  "slowest_rank", "duration",
                 "median", "excess", "fastest_rank", "fastest_duration"};
  for (auto& [step, times] : by_step) {
    // Slowest first; the lowest rank on ties.
    std::sort(times.begin(), times.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::vector<double> durations;
    for (const auto& [d, r] : times) durations.push_back(d);
    const double median = MedianOf(durations);
    auto fastest = std::min_element(times.begin(), times.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second < b.second;
    });
    out.rows.push_back({Cell::Int(step), Cell::Int(static_cast<int64_t>(times.size())),
                        Cell::Int(times.front().second), Cell::Fixed(times.front().first, 3),
                        Cell::Fixed(median, 3), Cell::Fixed(times.front().first - median, 3),
                        Cell::Int(fastest->second), Cell::Fixed(fastest->first, 3)});
  }
  if (std::string note = WithoutSteps(job); !note.empty()) out.notes.push_back(note);
  return out;
}

Result<AnalysisRows> DriftingRanks(const SummaryJob& job) {
  if (Status s = RequireSteps(job, "drifting_ranks"); !s.ok()) return Error{s.message()};
  struct Fit {
    int32_t rank;
    size_t steps;
    double mean = 0;
    std::optional<double> slope;
    int64_t span = 0;  // last step number - first
  };
  std::vector<Fit> fits;
  std::vector<double> all_steps, slopes;
  for (const LoadedSummary& s : job.summaries) {
    const std::vector<SummaryStep>& steps = s.summary.steps;
    Fit f{s.summary.options.rank, steps.size(), 0, std::nullopt, 0};
    if (steps.empty()) {
      fits.push_back(f);
      continue;
    }
    double sx = 0, sy = 0;
    for (const SummaryStep& st : steps) {
      sx += static_cast<double>(st.step);
      sy += StepUs(st);
      all_steps.push_back(StepUs(st));
    }
    const double n = static_cast<double>(steps.size());
    f.mean = sy / n;
    f.span = steps.back().step - steps.front().step;
    if (steps.size() >= 3) {
      double sxx = 0, sxy = 0;
      for (const SummaryStep& st : steps) {
        const double dx = static_cast<double>(st.step) - sx / n;
        sxx += dx * dx;
        sxy += dx * (StepUs(st) - f.mean);
      }
      if (sxx > 0) {
        f.slope = sxy / sxx;
        slopes.push_back(*f.slope);
      }
    }
    fits.push_back(f);
  }
  AnalysisRows out;
  out.columns = {"rank", "steps", "mean_step", "slope", "drift", "drift_over_steps", "drifting"};
  if (slopes.empty()) {
    out.notes.push_back("no rank has 3 steps or more: no slope to compare");
  }
  const double median_slope = slopes.empty() ? 0 : MedianOf(slopes);
  const double median_step = all_steps.empty() ? 0 : MedianOf(all_steps);
  struct Row {
    Fit fit;
    double drift = 0, over = 0;
    bool drifting = false;
  };
  std::vector<Row> rows;
  for (const Fit& f : fits) {
    Row r{f};
    if (f.slope) {
      r.drift = *f.slope - median_slope;
      r.over = r.drift * static_cast<double>(f.span);
      r.drifting = std::abs(r.over) > kDriftShare * median_step;
    }
    rows.push_back(r);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.drifting != b.drifting) return a.drifting;
    return std::abs(a.drift) > std::abs(b.drift);
  });
  for (const Row& r : rows) {
    const bool fitted = r.fit.slope.has_value();
    out.rows.push_back({Cell::Int(r.fit.rank), Cell::Int(static_cast<int64_t>(r.fit.steps)),
                        r.fit.steps ? Cell::Fixed(r.fit.mean, 3) : Cell::Empty(),
                        fitted ? Cell::Fixed(*r.fit.slope, 3) : Cell::Empty(),
                        fitted ? Cell::Fixed(r.drift, 3) : Cell::Empty(),
                        fitted ? Cell::Fixed(r.over, 3) : Cell::Empty(),
                        Cell::Int(r.drifting ? 1 : 0)});
  }
  char note[160];
  std::snprintf(note, sizeof(note),
                "median slope %.3f us per step; a rank drifts when its drift over its steps "
                "exceeds %.0f%% of the median step (%.3f us)",
                median_slope, kDriftShare * 100, median_step);
  out.notes.push_back(note);
  return out;
}

}  // namespace profsh
