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

  // Issuers and worker ranges pair first in, first out per collective, over the rank's whole
  // trace: each range takes the earliest issuer not yet taken that started no later than it. A
  // thread that issued several calls before gloo ran the first (DDP's bucket all-reduces) gets
  // them back in order; a range whose issuer came before the trace began takes none.
  auto by_time = [](const CollectiveCall* a, const CollectiveCall* b) { return a->ts < b->ts; };
  std::map<std::string, std::vector<const CollectiveCall*>> issuers_of;
  std::unordered_set<uint32_t> issuer_events;
  for (const CollectiveCall& c : issuers) {
    if (c.rank != rank) continue;
    issuers_of[c.name].push_back(&c);
    issuer_events.insert(c.event);
  }
  for (auto& [name, list] : issuers_of) std::stable_sort(list.begin(), list.end(), by_time);
  std::vector<const CollectiveCall*> ranges;
  for (const CollectiveCall& c : calls)
    if (c.rank == rank && !c.device && !issuer_events.contains(c.event) && !has_nodes(c.event))
      ranges.push_back(&c);
  std::stable_sort(ranges.begin(), ranges.end(), by_time);
  std::unordered_map<const CollectiveCall*, const CollectiveCall*> issuer_of;
  std::map<std::string, size_t> next_issuer;  // per collective: the first not yet taken
  for (const CollectiveCall* range : ranges) {
    auto list = issuers_of.find(range->name);
    if (list == issuers_of.end()) continue;
    size_t& k = next_issuer[range->name];
    if (k < list->second.size() && list->second[k]->ts <= range->ts)
      issuer_of[range] = list->second[k++];
  }
  std::vector<const CollectiveCall*> pending;
  for (const CollectiveCall* c : ranges)
    if (c->ts >= window_start && c->ts <= window_end) pending.push_back(c);
  if (pending.empty()) return counts;

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

  for (const CollectiveCall* call : pending) {
    auto paired = issuer_of.find(call);
    if (paired == issuer_of.end() || !has_nodes(paired->second->event)) continue;
    const CollectiveCall* issuer = paired->second;
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

    // Did the issuing thread wait? Only a call that ends after its issuer returned can be waited
    // for, and only if the thread started nothing (but the issuer itself) from the issuer's end
    // to the call's: an operator starting in the very microsecond the issuer ends is work.
    const std::vector<uint32_t>& thread = thread_nodes[trace.events.track(issuer->event)];
    const int64_t issuer_end = graph.node_ts[by.end];
    if (call->end <= issuer_end) continue;
    auto at_or_after = [&](int64_t ts) {
      return std::lower_bound(thread.begin(), thread.end(), ts,
                              [&](uint32_t n, int64_t t) { return graph.node_ts[n] < t; });
    };
    auto next = at_or_after(call->end);
    if (next == thread.end()) continue;
    bool busy = false;
    for (auto it = at_or_after(issuer_end); it < next && !busy; ++it)
      busy = graph.node_is_start[*it] && graph.node_event[*it] != issuer->event;
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
        // Stored weights may be negative (the longest path counts them 0): clamp into [0, w].
        graph.edge_weight[own] =
            std::clamp<int64_t>(after, 0, std::max<int64_t>(0, graph.edge_weight[own]));
      }
    }
  }
  return counts;
}

}  // namespace profsh
