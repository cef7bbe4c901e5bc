// Kernel breakdown by type and by kernel, and the GPU user annotation breakdown (HTA's
// get_gpu_kernel_breakdown and get_gpu_user_annotation_breakdown).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>

#include "engine/analysis/gpu_analyses.h"
#include "engine/analysis/gpu_intervals.h"

namespace profsh {

DurationStats SummarizeDurations(const std::vector<int64_t>& durations) {
  DurationStats s;
  s.count = static_cast<int64_t>(durations.size());
  if (durations.empty()) return s;
  s.max = INT64_MIN;
  s.min = INT64_MAX;
  for (int64_t d : durations) {
    s.sum += d;
    s.max = std::max(s.max, d);
    s.min = std::min(s.min, d);
  }
  s.mean = static_cast<double>(s.sum) / static_cast<double>(s.count);
  if (s.count > 1) {
    double squares = 0;
    for (int64_t d : durations)
      squares += (static_cast<double>(d) - s.mean) * (static_cast<double>(d) - s.mean);
    s.stddev = std::sqrt(squares / static_cast<double>(s.count - 1));
  }
  return s;
}

double QuantileOfSorted(const std::vector<int64_t>& ascending, double q) {
  if (ascending.empty()) return 0;
  double pos = q * static_cast<double>(ascending.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, ascending.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return static_cast<double>(ascending[lo]) +
         (static_cast<double>(ascending[hi]) - static_cast<double>(ascending[lo])) * frac;
}

namespace {

struct NamedStats {
  std::string name;
  DurationStats stats;
  std::vector<int64_t> durations;
};

// HTA's _aggr_gpu_kernel_time: groups durations by name, most time first; past `limit` names,
// the names beyond the `ratio` quantile of the running total and beyond the first `limit` become
// one "others" group, except those `allowlisted`. profsh keeps each listed name's own
// max/min/mean/stddev and computes the "others" figures over its instances (HTA re-aggregates the
// per-name sums instead, see docs/ANALYSIS.md).
template <typename Allowlisted>
std::vector<NamedStats> AggregateByName(std::map<std::string, std::vector<int64_t>> groups,
                                        double ratio, int64_t limit, Allowlisted allowlisted) {
  std::vector<NamedStats> named;
  for (auto& [name, durations] : groups) {
    DurationStats s = SummarizeDurations(durations);
    named.push_back({name, s, std::move(durations)});
  }
  std::stable_sort(named.begin(), named.end(), [](const NamedStats& a, const NamedStats& b) {
    return a.stats.sum > b.stats.sum;
  });
  if (static_cast<int64_t>(named.size()) <= limit) return named;
  std::vector<int64_t> cumsum(named.size());
  int64_t running = 0;
  for (size_t i = 0; i < named.size(); ++i) cumsum[i] = running += named[i].stats.sum;
  const double cut = QuantileOfSorted(cumsum, ratio);
  std::vector<NamedStats> kept;
  std::vector<int64_t> others;
  for (size_t i = 0; i < named.size(); ++i) {
    bool to_others = (static_cast<double>(cumsum[i]) > cut || static_cast<int64_t>(i) >= limit) &&
                     !allowlisted(named[i].name);
    if (to_others) {
      others.insert(others.end(), named[i].durations.begin(), named[i].durations.end());
    } else {
      kept.push_back(std::move(named[i]));
    }
  }
  if (!others.empty()) kept.push_back({"others", SummarizeDurations(others), {}});
  return kept;
}

std::vector<NamedStats> AggregateByName(std::map<std::string, std::vector<int64_t>> groups,
                                        double ratio, int64_t limit) {
  return AggregateByName(std::move(groups), ratio, limit, [](const std::string&) { return false; });
}

std::vector<Cell> StatsCells(const DurationStats& s) {
  return {Cell::Int(s.sum), Cell::Int(s.max), Cell::Int(s.min), Cell::Double(s.mean),
          Cell::Double(s.stddev)};
}

// Time covered by each combination of kernel types (HTA's _get_gpu_kernel_type_time): a sweep
// over the merged intervals of each type; a stretch where two types run at once counts once,
// as "A overlapping B".
std::map<std::string, int64_t> TimeByTypeCombination(const GpuEvents& g,
                                                     const std::vector<KernelType>& types) {
  struct Edge {
    int64_t time;
    int delta;
  };
  std::vector<Edge> edges;
  for (size_t t = 0; t < types.size(); ++t) {
    std::vector<Interval> intervals;
    for (size_t k = 0; k < g.size(); ++k)
      if (g.type[k] == types[t]) intervals.push_back({g.ts[k], g.end[k]});
    for (const Interval& iv : MergeIntervals(std::move(intervals))) {
      edges.push_back({iv.ts, 1 << t});
      edges.push_back({iv.end, -(1 << t)});
    }
  }
  std::stable_sort(edges.begin(), edges.end(),
                   [](const Edge& a, const Edge& b) { return a.time < b.time; });
  std::map<std::string, int64_t> time;
  int running = 0;
  for (size_t i = 0; i + 1 < edges.size(); ++i) {
    running += edges[i].delta;
    if (running <= 0) continue;
    std::string label;
    for (size_t t = 0; t < types.size(); ++t) {
      if (!(running & (1 << t))) continue;
      if (!label.empty()) label += " overlapping ";
      label += KernelTypeName(types[t]);
    }
    time[label] += edges[i + 1].time - edges[i].time;
  }
  return time;
}

}  // namespace

KernelBreakdown ComputeKernelBreakdown(const GpuEvents& g, const KernelBreakdownOptions& options,
                                       const Trace& trace) {
  KernelBreakdown out;
  out.by_type.columns = {"kernel_type", "sum", "percentage"};
  out.by_kernel.columns = {"name", "kernel_type", "rank", "sum", "max", "min", "mean", "stddev"};
  out.by_type.notes = g.notes;
  if (g.size() == 0) {
    out.by_type.notes.push_back("the trace has no device work (kernels, copies, sets)");
    out.by_kernel.notes = out.by_type.notes;
    return out;
  }
  std::vector<KernelType> types{KernelType::kComputation, KernelType::kCommunication};
  if (options.include_memory_kernels) types.push_back(KernelType::kMemory);

  auto time = TimeByTypeCombination(g, types);
  std::vector<std::pair<std::string, int64_t>> by_type(time.begin(), time.end());
  std::stable_sort(by_type.begin(), by_type.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  int64_t total = 0;
  for (const auto& [label, t] : by_type) total += t;
  for (const auto& [label, t] : by_type) {
    double pct = total == 0
                     ? 0
                     : RoundDecimal(100.0 * static_cast<double>(t) / static_cast<double>(total), 1);
    out.by_type.rows.push_back({Cell::Text(label), Cell::Int(t), Cell::Double(pct)});
  }

  struct Row {
    std::string name;
    KernelType type;
    DurationStats stats;
  };
  std::vector<Row> rows;
  for (KernelType type : types) {
    std::map<std::string, std::vector<int64_t>> groups;
    for (size_t k = 0; k < g.size(); ++k)
      if (g.type[k] == type)
        groups[std::string(trace.str(g.name[k]))].push_back(g.end[k] - g.ts[k]);
    for (auto& named :
         AggregateByName(std::move(groups), options.duration_ratio, options.num_kernels))
      rows.push_back({std::move(named.name), type, named.stats});
  }
  // HTA sorts by kernel type, then name (one rank per trace here).
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    std::string_view ta = KernelTypeName(a.type), tb = KernelTypeName(b.type);
    return ta != tb ? ta < tb : a.name < b.name;
  });
  for (Row& r : rows) {
    std::vector<Cell> cells{Cell::Text(r.name), Cell::Text(KernelTypeName(r.type)),
                            Cell::Int(g.rank)};
    for (Cell& c : StatsCells(r.stats)) cells.push_back(std::move(c));
    out.by_kernel.rows.push_back(std::move(cells));
  }
  out.by_kernel.notes = g.notes;
  return out;
}

AnalysisRows AnnotationBreakdown(const GpuEvents& g, const Trace& trace,
                                 const AnnotationBreakdownOptions& options) {
  AnalysisRows rows;
  rows.columns = {"name", "rank", "sum", "max", "min", "mean", "stddev"};
  rows.notes = g.notes;
  const bool gpu = options.use_gpu_annotation;
  const auto& ts = gpu ? g.annotation_ts : g.cpu_annotation_ts;
  const auto& end = gpu ? g.annotation_end : g.cpu_annotation_end;
  const auto& name = gpu ? g.annotation_name : g.cpu_annotation_name;
  if (ts.empty()) {
    rows.notes.push_back(gpu ? "the trace has no gpu_user_annotation ranges"
                             : "the trace has no user_annotation ranges");
    return rows;
  }
  std::map<std::string, std::vector<int64_t>> groups;
  for (size_t a = 0; a < ts.size(); ++a)
    groups[std::string(trace.str(name[a]))].push_back(end[a] - ts[a]);
  auto allowlisted = [&](const std::string& n) {
    if (!options.allowlist_patterns) return false;
    if (options.allowlist_patterns->empty()) return true;
    for (const std::string& p : *options.allowlist_patterns)
      if (n.find(p) != std::string::npos) return true;
    return false;
  };
  auto named = AggregateByName(std::move(groups), options.duration_ratio, options.num_annotations,
                               allowlisted);
  std::sort(named.begin(), named.end(),
            [](const NamedStats& a, const NamedStats& b) { return a.name < b.name; });
  for (const NamedStats& n : named) {
    std::vector<Cell> cells{Cell::Text(n.name), Cell::Int(g.rank)};
    for (Cell& c : StatsCells(n.stats)) cells.push_back(std::move(c));
    rows.rows.push_back(std::move(cells));
  }
  return rows;
}

}  // namespace profsh
