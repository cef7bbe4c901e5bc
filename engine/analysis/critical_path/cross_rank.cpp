#include "engine/analysis/critical_path/cross_rank.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "engine/analysis/critical_path/cp_worker_collectives.h"
#include "engine/analysis/ranks.h"

namespace profsh {

namespace {

struct Arrival {
  uint16_t part;
  uint32_t start, end;  // job graph nodes
  uint32_t event;
};

// The nodes of each event of one rank's graph (the first start and the last end node it has).
std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> NodesByEvent(const CpGraph& g,
                                                                         uint32_t offset) {
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> nodes;
  for (uint32_t n = 0; n < g.node_count(); ++n) {
    if (g.node_event[n] == kCpNoEvent) continue;
    auto [it, fresh] = nodes.try_emplace(g.node_event[n], UINT32_MAX, UINT32_MAX);
    if (g.node_is_start[n]) {
      if (it->second.first == UINT32_MAX) it->second.first = n + offset;
    } else {
      it->second.second = n + offset;
    }
  }
  return nodes;
}

}  // namespace

JobGraph LinkRanks(std::vector<RankGraphInput> ranks) {
  JobGraph out;
  CpGraph& g = out.graph;
  JobLayout& job = out.layout;
  using Key = std::tuple<std::string, std::string, int64_t>;
  std::map<Key, std::vector<Arrival>> calls;
  const Trace* calls_of = nullptr;
  std::vector<CollectiveCall> trace_calls, trace_issuers;
  for (size_t p = 0; p < ranks.size(); ++p) {
    RankGraphInput& in = ranks[p];
    // The ranks' graphs mostly come from one trace: its collectives are found once.
    if (in.trace != calls_of) {
      calls_of = in.trace;
      const std::vector<int32_t> rank_of_track = RankOfTrack(*in.trace);
      trace_calls = CollectiveCalls(*in.trace, rank_of_track);
      // Only host calls (gloo's ranges) can lack a node; NCCL's kernels need no issuer.
      const bool host_calls = std::any_of(trace_calls.begin(), trace_calls.end(),
                                          [](const CollectiveCall& c) { return !c.device; });
      trace_issuers =
          host_calls ? CollectiveIssuers(*in.trace, rank_of_track) : std::vector<CollectiveCall>{};
    }
    // The rank's window: its graph's nodes before the worker ranges are added (a range may end
    // past the window, and calls in that overhang are outside it, not unlinked).
    int64_t window_start = INT64_MAX, window_end = INT64_MIN;
    for (int64_t ts : in.graph.node_ts) {
      window_start = std::min(window_start, ts);
      window_end = std::max(window_end, ts);
    }
    const WorkerCollectiveCounts worker =
        AddWorkerCollectives(in.graph, *in.trace, in.rank, trace_calls, trace_issuers);
    job.worker_collectives += worker.joined;
    job.worker_collectives_waited += worker.waited;
    const uint32_t offset = static_cast<uint32_t>(g.node_count());
    for (uint32_t n = 0; n < in.graph.node_count(); ++n) {
      g.AddNode(in.graph.node_ts[n] + in.clock_offset_ns, in.graph.node_event[n],
                in.graph.node_is_start[n] != 0);
      job.node_part.push_back(static_cast<uint16_t>(p));
    }
    for (uint32_t e = 0; e < in.graph.edge_count(); ++e) {
      const uint32_t added =
          g.AddEdge(in.graph.edge_src[e] + offset, in.graph.edge_dst[e] + offset,
                    in.graph.edge_type[e], in.graph.edge_weight[e], in.graph.edge_event[e]);
      if (e < in.graph.edge_bound.size()) g.edge_bound[added] = in.graph.edge_bound[e];
    }
    job.parts.push_back(JobPart{in.rank, in.trace, in.clock_offset_ns, offset,
                                static_cast<uint32_t>(g.node_count())});
    const auto nodes = NodesByEvent(in.graph, offset);
    for (const CollectiveCall& c : trace_calls) {
      if (c.rank != in.rank) continue;
      auto it = nodes.find(c.event);
      if (it == nodes.end() || it->second.first == UINT32_MAX || it->second.second == UINT32_MAX) {
        // Outside the rank's window, or a call the graph has no node for (a worker thread's
        // collective whose issuing operator is not in the graph).
        if (!in.graph.node_ts.empty() && c.ts >= window_start && c.ts <= window_end)
          ++job.calls_outside_graph;
        continue;
      }
      calls[{c.group, c.name, c.seq}].push_back(
          Arrival{static_cast<uint16_t>(p), it->second.first, it->second.second, c.event});
    }
    in.graph = CpGraph();  // its copy is in the job's graph now
  }
  // The ranks' edges into each node, before the links add theirs.
  std::vector<uint32_t> in_begin(g.node_count() + 1, 0), in_edges(g.edge_count());
  for (uint32_t e = 0; e < g.edge_count(); ++e) ++in_begin[g.edge_dst[e] + 1];
  for (size_t n = 0; n < g.node_count(); ++n) in_begin[n + 1] += in_begin[n];
  {
    std::vector<uint32_t> next(in_begin.begin(), in_begin.end() - 1);
    for (uint32_t e = 0; e < g.edge_count(); ++e) in_edges[next[g.edge_dst[e]]++] = e;
  }
  for (auto& [key, members] : calls) {
    bool once_per_rank = members.size() >= 2;
    std::sort(members.begin(), members.end(),
              [](const Arrival& a, const Arrival& b) { return a.part < b.part; });
    for (size_t k = 1; once_per_rank && k < members.size(); ++k)
      once_per_rank = members[k].part != members[k - 1].part;
    if (!once_per_rank) {
      ++job.unlinked_collectives;
      continue;
    }
    // The last arrival; the lowest rank on a tie.
    const Arrival* last = &members.front();
    for (const Arrival& a : members)
      if (g.node_ts[a.start] > g.node_ts[last->start]) last = &a;
    const int64_t last_start = g.node_ts[last->start];
    const uint32_t meet = g.AddNode(last_start, kCpNoEvent, true);
    job.node_part.push_back(kJobNoPart);
    for (const Arrival& a : members) g.AddEdge(a.start, meet, CpEdgeType::kSyncDependency, 0);
    for (const Arrival& a : members) {
      const int64_t waited = last_start - g.node_ts[a.start];
      // The call's own edges into its end (a kernel has one, from its start; a CPU call's last
      // part follows its last child): the wait comes off them, and the link counts as they do.
      CpBound bound = CpBound::kGpuCommunication;
      for (uint32_t k = in_begin[a.end]; k < in_begin[a.end + 1]; ++k) {
        const uint32_t e = in_edges[k];
        if (g.edge_event[e] != a.event || g.edge_type[e] != CpEdgeType::kOperatorKernel) continue;
        if (waited > 0) g.edge_weight[e] = std::max<int64_t>(0, g.edge_weight[e] - waited);
        if (e < g.edge_bound.size()) bound = g.edge_bound[e];
      }
      const uint32_t link = g.AddEdge(meet, a.end, CpEdgeType::kOperatorKernel,
                                      std::max<int64_t>(0, g.node_ts[a.end] - last_start), a.event);
      if (link < g.edge_bound.size()) g.edge_bound[link] = bound;
    }
    ++job.linked_collectives;
  }
  return out;
}

SinkedGraph WithSinkOnPart(const CpGraph& graph, const JobLayout& layout, uint16_t part) {
  SinkedGraph s{graph, 0};
  s.sink = s.graph.AddNode(0, kCpNoEvent, false);
  const JobPart& p = layout.parts[part];
  for (uint32_t n = p.node_begin; n < p.node_end; ++n)
    s.graph.AddEdge(n, s.sink, CpEdgeType::kDependency, kCpSinkBias);
  return s;
}

Result<CpPath> PathEndingOnPart(const SinkedGraph& sinked, std::span<const int64_t> weights) {
  std::vector<int64_t> all;
  if (!weights.empty()) {
    all.assign(weights.begin(), weights.end());
    all.resize(sinked.graph.edge_count(), kCpSinkBias);
  }
  Result<CpPath> path = LongestPath(sinked.graph, all);
  if (!path.ok()) return path;
  CpPath& p = path.value();
  if (!p.nodes.empty() && p.nodes.back() == sinked.sink) {
    p.nodes.pop_back();
    p.edges.pop_back();
    p.length_ns -= kCpSinkBias;
  }
  return path;
}

}  // namespace profsh
