#include "engine/analysis/critical_path/cp_graph.h"

#include <algorithm>
#include <string>

namespace profsh {

std::string_view CpEdgeTypeName(CpEdgeType type) {
  switch (type) {
    case CpEdgeType::kOperatorKernel:
      return "critical_path_operator";
    case CpEdgeType::kDependency:
      return "critical_path_dependency";
    case CpEdgeType::kKernelLaunchDelay:
      return "critical_path_kernel_launch_delay";
    case CpEdgeType::kKernelKernelDelay:
      return "critical_path_kernel_kernel_delay";
    case CpEdgeType::kSyncDependency:
      return "critical_path_sync_dependency";
  }
  return "";
}

std::string_view CpBoundName(CpBound bound) {
  switch (bound) {
    case CpBound::kNone:
      return "";
    case CpBound::kCpu:
      return "cpu_bound";
    case CpBound::kDataLoading:
      return "data_loading";
    case CpBound::kGpuCompute:
      return "gpu_compute_bound";
    case CpBound::kGpuCommunication:
      return "gpu_communication_bound";
    case CpBound::kKernelKernelOverhead:
      return "gpu_kernel_kernel_overhead";
    case CpBound::kKernelLaunchOverhead:
      return "gpu_kernel_launch_overhead";
    case CpBound::kCpuCommunication:
      return "cpu_communication_bound";
  }
  return "";
}

namespace {
uint64_t PairKey(uint32_t src, uint32_t dst) {
  return (uint64_t{src} << 32) | dst;
}
}  // namespace

uint32_t CpGraph::AddNode(int64_t ts, uint32_t event, bool is_start) {
  node_ts.push_back(ts);
  node_event.push_back(event);
  node_is_start.push_back(is_start ? 1 : 0);
  return static_cast<uint32_t>(node_ts.size() - 1);
}

uint32_t CpGraph::AddEdge(uint32_t src, uint32_t dst, CpEdgeType type, int64_t weight,
                          uint32_t event) {
  auto [it, added] =
      edge_of_pair_.try_emplace(PairKey(src, dst), static_cast<uint32_t>(edge_src.size()));
  const uint32_t e = it->second;
  if (added) {
    edge_src.push_back(src);
    edge_dst.push_back(dst);
    edge_weight.push_back(weight);
    edge_type.push_back(type);
    edge_event.push_back(event);
    edge_bound.push_back(CpBound::kNone);
  } else {
    edge_weight[e] = weight;
    edge_type[e] = type;
    if (event != kCpNoEvent) edge_event[e] = event;
  }
  return e;
}

uint32_t CpGraph::FindEdge(uint32_t src, uint32_t dst) const {
  auto it = edge_of_pair_.find(PairKey(src, dst));
  return it == edge_of_pair_.end() ? UINT32_MAX : it->second;
}

namespace {

// Edge ids grouped by one end, each group in edge order (a counting sort keeps the order).
struct Adjacency {
  std::vector<uint32_t> begin, edges;
  std::span<const uint32_t> Of(uint32_t node) const {
    return std::span<const uint32_t>(edges).subspan(begin[node], begin[node + 1] - begin[node]);
  }
};

Adjacency Group(const std::vector<uint32_t>& end_of_edge, size_t nodes,
                const std::vector<uint8_t>& kept) {
  Adjacency a;
  a.begin.assign(nodes + 1, 0);
  for (size_t e = 0; e < end_of_edge.size(); ++e)
    if (kept[e]) ++a.begin[end_of_edge[e] + 1];
  for (size_t n = 0; n < nodes; ++n) a.begin[n + 1] += a.begin[n];
  a.edges.resize(a.begin[nodes]);
  std::vector<uint32_t> next(a.begin.begin(), a.begin.end() - 1);
  for (size_t e = 0; e < end_of_edge.size(); ++e)
    if (kept[e]) a.edges[next[end_of_edge[e]]++] = static_cast<uint32_t>(e);
  return a;
}

}  // namespace

Result<CpPath> LongestPath(const CpGraph& graph, std::span<const int64_t> weights) {
  const size_t n = graph.node_count(), m = graph.edge_count();
  if (!weights.empty() && weights.size() != m)
    return Error{"critical path: " + std::to_string(weights.size()) + " edge weights for " +
                 std::to_string(m) + " edges"};
  auto weight = [&](uint32_t e) {
    const int64_t w = weights.empty() ? graph.edge_weight[e] : weights[e];
    return std::max<int64_t>(w, 0);
  };
  std::vector<uint8_t> kept(m, 1);
  if (!weights.empty())
    for (size_t e = 0; e < m; ++e) kept[e] = weights[e] != kCpRemovedEdge;
  const Adjacency out = Group(graph.edge_src, n, kept);
  const Adjacency in = Group(graph.edge_dst, n, kept);

  // networkx's topological_generations over the graph HTA hands it, whose nodes are those of
  // its edges in the order they first appear there (a node on no edge is not in it): the nodes
  // with no incoming edge in that order, then each generation's children in the order their
  // last incoming edge is removed.
  std::vector<uint32_t> indegree(n), order, appearance;
  appearance.reserve(n);
  std::vector<uint8_t> seen(n, 0);
  for (size_t e = 0; e < m; ++e) {
    for (uint32_t v : {graph.edge_src[e], graph.edge_dst[e]}) {
      if (!seen[v]) seen[v] = 1, appearance.push_back(v);
    }
  }
  order.reserve(appearance.size());
  for (uint32_t v : appearance) {
    indegree[v] = static_cast<uint32_t>(in.Of(v).size());
    if (indegree[v] == 0) order.push_back(v);
  }
  for (size_t i = 0; i < order.size(); ++i)
    for (uint32_t e : out.Of(order[i]))
      if (--indegree[graph.edge_dst[e]] == 0) order.push_back(graph.edge_dst[e]);
  if (order.size() != appearance.size()) {
    for (size_t e = 0; e < m; ++e)
      if (kept[e] && indegree[graph.edge_dst[e]] != 0 && indegree[graph.edge_src[e]] != 0)
        return Error{"critical path: the graph has a cycle through the edge from node " +
                     std::to_string(graph.edge_src[e]) + " to node " +
                     std::to_string(graph.edge_dst[e]) + " (" +
                     std::string(CpEdgeTypeName(graph.edge_type[e])) + ")"};
    return Error{"critical path: the graph has a cycle"};
  }

  std::vector<int64_t> dist(n, 0);
  std::vector<uint32_t> via(n, UINT32_MAX);  // the edge the best path arrives by
  for (uint32_t v : order) {
    int64_t best = 0;
    uint32_t best_edge = UINT32_MAX;
    for (uint32_t e : in.Of(v)) {
      const int64_t d = dist[graph.edge_src[e]] + weight(e);
      if (best_edge == UINT32_MAX || d > best) best = d, best_edge = e;
    }
    if (best_edge != UINT32_MAX && best >= 0) dist[v] = best, via[v] = best_edge;
  }
  CpPath path;
  if (order.empty()) return path;
  uint32_t end = order[0];
  for (uint32_t v : order)
    if (dist[v] > dist[end]) end = v;
  path.length_ns = dist[end];
  for (uint32_t v = end;; v = graph.edge_src[via[v]]) {
    path.nodes.push_back(v);
    if (via[v] == UINT32_MAX) break;
    path.edges.push_back(via[v]);
  }
  std::reverse(path.nodes.begin(), path.nodes.end());
  std::reverse(path.edges.begin(), path.edges.end());
  return path;
}

}  // namespace profsh
