#include "engine/analysis/critical_path/job_path.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "engine/analysis/ranks.h"

namespace profsh {

namespace {

// The job's critical path with the graph's weights replaced, for the row makers that read them
// from the graph.
CriticalPath WithWeights(const JobCriticalPath& job, std::span<const int64_t> weights) {
  CriticalPath cp = job.cp;
  if (!weights.empty()) {
    for (size_t e = 0; e < weights.size(); ++e)
      cp.graph.edge_weight[e] = weights[e] == kCpRemovedEdge ? 0 : weights[e];
  }
  return cp;
}

JobLayout OnePart(const Trace& trace, const CriticalPath& cp) {
  JobLayout layout;
  layout.parts.push_back(
      JobPart{cp.rank, &trace, 0, 0, static_cast<uint32_t>(cp.graph.node_count())});
  layout.node_part.assign(cp.graph.node_count(), 0);
  return layout;
}

}  // namespace

Result<JobCriticalPath> AnalyzeJobCriticalPath(const Trace& trace,
                                               const JobCriticalPathOptions& options) {
  const std::vector<int32_t> ranks = RanksOf(RankOfTrack(trace));
  JobCriticalPath job;
  if (ranks.size() < 2 || !options.link_ranks) {
    auto cp = AnalyzeCriticalPath(trace, options.path);
    if (!cp.ok()) return cp.error();
    job.cp = std::move(cp.value());
    job.layout = OnePart(trace, job.cp);
    job.end_part = 0;
    return job;
  }
  if (options.path.rank && std::find(ranks.begin(), ranks.end(), *options.path.rank) == ranks.end())
    return Error{"critical_path: the trace has no rank " + std::to_string(*options.path.rank)};
  std::vector<RankGraphInput> inputs;
  std::vector<std::string> notes;
  int64_t window_start = INT64_MAX, window_end = INT64_MIN;
  for (int32_t r : ranks) {
    CriticalPathOptions o = options.path;
    o.rank = r;
    auto cp = AnalyzeCriticalPath(trace, o);
    if (!cp.ok()) return Error{"rank " + std::to_string(r) + ": " + cp.error().message};
    for (const std::string& n : cp->notes) {
      if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
    }
    window_start = std::min(window_start, cp->window_start);
    window_end = std::max(window_end, cp->window_end);
    inputs.push_back(RankGraphInput{r, &trace, std::move(cp->graph), 0});
  }
  JobGraph linked = LinkRanks(std::move(inputs));
  job.layout = std::move(linked.layout);
  job.cp.graph = std::move(linked.graph);
  job.linked = true;
  job.end_part = options.path.rank ? job.layout.PartOfRank(*options.path.rank) : kJobNoPart;
  auto path = job.end_part == kJobNoPart
                  ? LongestPath(job.cp.graph)
                  : PathEndingOnPart(WithSinkOnPart(job.cp.graph, job.layout, job.end_part), {});
  if (!path.ok()) return path.error();
  job.cp.path = std::move(path.value());
  job.cp.window_start = window_start;
  job.cp.window_end = window_end;
  job.cp.rank = -1;
  if (!job.cp.path.nodes.empty()) {
    const uint16_t part = job.layout.node_part[job.cp.path.nodes.back()];
    if (part != kJobNoPart) job.cp.rank = job.layout.parts[part].rank;
  }
  job.cp.notes = std::move(notes);
  job.cp.notes.push_back(std::to_string(ranks.size()) + " ranks linked at " +
                         std::to_string(job.layout.linked_collectives) + " collective(s)");
  if (job.layout.worker_collectives > 0)
    job.cp.notes.push_back(
        std::to_string(job.layout.worker_collectives) +
        " collective range(s) run on a backend's own threads (such as gloo's gloo:all_reduce), "
        "which HTA's graph leaves out, were added and joined to the operators that issued them; " +
        std::to_string(job.layout.worker_collectives_waited) +
        " of them were waited for by the issuing thread");
  if (job.layout.calls_outside_graph > 0)
    job.cp.notes.push_back(
        std::to_string(job.layout.calls_outside_graph) +
        " collective call(s) in the window have no node in their rank's graph and no issuing "
        "operator (c10d::* or record_param_comms) in it, and could not be linked: the path does "
        "not see the ranks wait for each other there");
  if (job.layout.unlinked_collectives > 0)
    job.cp.notes.push_back(std::to_string(job.layout.unlinked_collectives) +
                           " collective(s) not called once by each of several ranks in the "
                           "window were left unlinked");
  return job;
}

Result<WhatIfResult> JobWhatIf(const JobCriticalPath& job, const std::vector<WhatIfChange>& changes,
                               std::span<const int64_t> start) {
  return WhatIf(job.cp.graph, job.layout, changes, job.linked ? job.end_part : kJobNoPart, start);
}

AnalysisRows JobBreakdown(const Trace& trace, const JobCriticalPath& job, const CpPath& path,
                          std::span<const int64_t> weights) {
  AnalysisRows rows = weights.empty()
                          ? CriticalPathBreakdown(trace, job.cp, path)
                          : CriticalPathBreakdown(trace, WithWeights(job, weights), path);
  AnalysisRows out;
  out.columns = rows.columns;
  out.columns.insert(out.columns.begin() + 1, "rank");
  out.notes = rows.notes;
  for (size_t i = 0; i < rows.rows.size(); ++i) {
    std::vector<Cell> row = rows.rows[i];
    const uint16_t part = job.layout.EdgePart(job.cp.graph, path.edges[i]);
    row.insert(row.begin() + 1,
               part == kJobNoPart ? Cell::Empty() : Cell::Int(job.layout.parts[part].rank));
    out.rows.push_back(row);
  }
  return out;
}

AnalysisRows JobSummary(const JobCriticalPath& job, const CpPath& path,
                        std::span<const int64_t> weights) {
  return weights.empty() ? CriticalPathSummary(job.cp, path)
                         : CriticalPathSummary(WithWeights(job, weights), path);
}

AnalysisRows TopContributors(const Trace& trace, const JobCriticalPath& job, const CpPath& path,
                             size_t limit, std::span<const int64_t> weights) {
  const CpGraph& g = job.cp.graph;
  struct Sum {
    int64_t edges = 0, ns = 0;
  };
  std::map<std::tuple<int32_t, std::string, std::string>, Sum> sums;
  int64_t total = 0;
  for (uint32_t e : path.edges) {
    const int64_t w = std::max<int64_t>(0, weights.empty() ? g.edge_weight[e] : weights[e]);
    total += w;
    if (w == 0) continue;
    const uint16_t part = job.layout.EdgePart(g, e);
    const int32_t rank = part == kJobNoPart ? -1 : job.layout.parts[part].rank;
    const uint32_t ev = g.edge_event[e];
    std::string name = ev == kCpNoEvent
                           ? std::string("(") + std::string(CpEdgeTypeName(g.edge_type[e])) + ")"
                           : std::string(trace.str(trace.events.name(ev)));
    Sum& s = sums[{rank, std::move(name), std::string(CpBoundName(g.edge_bound[e]))}];
    ++s.edges;
    s.ns += w;
  }
  std::vector<std::pair<std::tuple<int32_t, std::string, std::string>, Sum>> order(sums.begin(),
                                                                                   sums.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  if (limit > 0 && order.size() > limit) order.resize(limit);
  AnalysisRows out;
  out.columns = {"rank", "name", "bound_by", "edges", "duration", "pct"};
  for (const auto& [key, s] : order) {
    out.rows.push_back(
        {Cell::Int(std::get<0>(key)), Cell::Text(std::get<1>(key)), Cell::Text(std::get<2>(key)),
         Cell::Int(s.edges), Cell::Fixed(static_cast<double>(s.ns) / 1000.0, 3),
         Cell::Fixed(
             total > 0 ? 100.0 * static_cast<double>(s.ns) / static_cast<double>(total) : 0.0, 2)});
  }
  return out;
}

}  // namespace profsh
