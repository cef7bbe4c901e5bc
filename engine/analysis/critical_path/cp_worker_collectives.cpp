#include "engine/analysis/critical_path/cp_worker_collectives.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace profsh {

std::vector<CollectiveCall> CollectiveIssuers(const Trace& trace,
                                              const std::vector<int32_t>& rank_of_track) {
  std::vector<CollectiveCall> issuers =
      CollectiveCallsOf(trace, rank_of_track, CollectiveSource::kParamComms);
  std::vector<CollectiveCall> ops =
      CollectiveCallsOf(trace, rank_of_track, CollectiveSource::kDispatcherOp);
  issuers.insert(issuers.end(), std::make_move_iterator(ops.begin()),
                 std::make_move_iterator(ops.end()));
  return issuers;
}

namespace {

constexpr uint32_t kNoNode = UINT32_MAX;

struct EventNodes {
  uint32_t start = kNoNode, end = kNoNode;
};

}  // namespace

WorkerCollectiveCounts AddWorkerCollectives(CpGraph& graph, const Trace& trace, int32_t rank,
                                            std::span<const CollectiveCall> calls,
                                            std::span<const CollectiveCall> issuers) {
  WorkerCollectiveCounts counts;
  const bool any_host = std::any_of(calls.begin(), calls.end(), [&](const CollectiveCall& c) {
    return c.rank == rank && !c.device;
  });
  if (graph.node_count() == 0 || !any_host) return counts;
  const auto [lo, hi] = std::minmax_element(graph.node_ts.begin(), graph.node_ts.end());
  const int64_t window_start = *lo, window_end = *hi;
  std::unordered_map<uint32_t, EventNodes> nodes_of;
  for (uint32_t n = 0; n < graph.node_count(); ++n) {
    if (graph.node_event[n] == kCpNoEvent) continue;
    EventNodes& en = nodes_of[graph.node_event[n]];
    if (graph.node_is_start[n]) {
      if (en.start == kNoNode) en.start = n;
    } else {
      en.end = n;
    }
  }
  auto has_nodes = [&](uint32_t event) {
    auto it = nodes_of.find(event);
    return it != nodes_of.end() && it->second.start != kNoNode && it->second.end != kNoNode;
  };

  // The issuers with nodes, per collective, in time order.
  std::map<std::string, std::vector<const CollectiveCall*>> issuers_of;
  for (const CollectiveCall& c : issuers)
    if (c.rank == rank && has_nodes(c.event)) issuers_of[c.name].push_back(&c);
  for (auto& [name, list] : issuers_of)
    std::stable_sort(
        list.begin(), list.end(),
        [](const CollectiveCall* a, const CollectiveCall* b) { return a->ts < b->ts; });
  std::vector<const CollectiveCall*> pending;
  for (const CollectiveCall& c : calls)
    if (c.rank == rank && !c.device && c.ts >= window_start && c.ts <= window_end &&
        !has_nodes(c.event))
      pending.push_back(&c);
  if (pending.empty()) return counts;
  std::stable_sort(pending.begin(), pending.end(),
                   [](const CollectiveCall* a, const CollectiveCall* b) { return a->ts < b->ts; });

  // Each issuing thread's nodes in time order (the graph's nodes are in time order).
  std::unordered_map<uint32_t, std::vector<uint32_t>> thread_nodes;
  for (const auto& [name, list] : issuers_of)
    for (const CollectiveCall* c : list) thread_nodes[trace.events.track(c->event)];
  for (uint32_t n = 0; n < graph.node_count(); ++n) {
    if (graph.node_event[n] == kCpNoEvent) continue;
    auto it = thread_nodes.find(trace.events.track(graph.node_event[n]));
    if (it != thread_nodes.end()) it->second.push_back(n);
  }
  auto earlier = [&](uint32_t a, uint32_t b) {
    return graph.node_ts[a] != graph.node_ts[b] ? graph.node_ts[a] < graph.node_ts[b] : a < b;
  };
  for (auto& [track, list] : thread_nodes) std::stable_sort(list.begin(), list.end(), earlier);

  std::unordered_set<const CollectiveCall*> taken;
  for (const CollectiveCall* call : pending) {
    auto list = issuers_of.find(call->name);
    if (list == issuers_of.end()) continue;
    const CollectiveCall* issuer = nullptr;
    for (const CollectiveCall* c : list->second) {
      if (c->ts > call->ts) break;
      if (!taken.contains(c)) issuer = c;
    }
    if (issuer == nullptr) continue;
    taken.insert(issuer);
    const EventNodes by = nodes_of[issuer->event];
    const uint32_t start = graph.AddNode(call->ts, call->event, true);
    const uint32_t end = graph.AddNode(call->end, call->event, false);
    const uint32_t span =
        graph.AddEdge(start, end, CpEdgeType::kOperatorKernel, call->end - call->ts, call->event);
    graph.edge_bound[span] = CpBound::kCpuCommunication;
    const uint32_t handoff =
        graph.AddEdge(by.start, start, CpEdgeType::kOperatorKernel,
                      std::max<int64_t>(0, call->ts - graph.node_ts[by.start]), issuer->event);
    graph.edge_bound[handoff] = CpBound::kCpu;
    ++counts.joined;

    // Did the issuing thread wait? Nothing of it starts between the issuer's end and the call's.
    const std::vector<uint32_t>& thread = thread_nodes[trace.events.track(issuer->event)];
    const int64_t issuer_end = graph.node_ts[by.end];
    auto at_or_after = [&](int64_t ts) {
      return std::lower_bound(thread.begin(), thread.end(), ts,
                              [&](uint32_t n, int64_t t) { return graph.node_ts[n] < t; });
    };
    auto next = at_or_after(call->end);
    if (next == thread.end()) continue;
    bool busy = false;
    for (auto it = at_or_after(issuer_end); it < next && !busy; ++it)
      busy = graph.node_is_start[*it] && graph.node_ts[*it] > issuer_end;
    if (busy) continue;
    const uint32_t resumed = *next;
    graph.AddEdge(end, resumed, CpEdgeType::kSyncDependency, 0);
    ++counts.waited;
    // The thread's own time up to the call's end was waiting, found through the call now.
    if (next != thread.begin()) {
      const uint32_t before = *(next - 1);
      const uint32_t own = graph.FindEdge(before, resumed);
      if (own != UINT32_MAX && graph.edge_type[own] == CpEdgeType::kOperatorKernel) {
        const int64_t after = graph.node_ts[resumed] - std::max(graph.node_ts[before], call->end);
        graph.edge_weight[own] = std::clamp<int64_t>(after, 0, graph.edge_weight[own]);
      }
    }
  }
  return counts;
}

}  // namespace profsh
