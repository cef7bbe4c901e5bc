// The critical path graph of HTA's critical_path_analysis.py as plain arrays: a node is a point
// in time (an event's start or end), an edge a span of time or a dependency between two points.
// It holds no reference to the trace it came from, so the cross-rank linker can join several
// ranks' graphs and a what-if can recompute the path on it with some edges' weights changed.
// docs/ANALYSIS.md ("Critical path") gives the rules that build it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/util/result.h"

namespace profsh {

// HTA's CPEdgeType.
enum class CpEdgeType : uint8_t {
  kOperatorKernel,     // the span of an operator, runtime call or kernel (or a part of one)
  kDependency,         // nested or consecutive CPU events, runtime-lock order; weight 0
  kKernelLaunchDelay,  // a runtime call's start to its kernel's start
  kKernelKernelDelay,  // one kernel's end to the next one's start on a stream
  kSyncDependency,     // a synchronization: the GPU work a CPU call or a kernel waited for
};
// HTA's spelling ("critical_path_operator", ...).
std::string_view CpEdgeTypeName(CpEdgeType type);

// What bounds an edge on the path (HTA's BoundType; kNone for dependency and sync edges).
enum class CpBound : uint8_t {
  kNone,
  kCpu,
  kDataLoading,
  kGpuCompute,
  kGpuCommunication,
  kKernelKernelOverhead,
  kKernelLaunchOverhead,
  // Not HTA's: a collective a backend runs on its own CPU threads (gloo), which HTA's graph
  // leaves out (cp_worker_collectives.h).
  kCpuCommunication,
};
// HTA's spelling ("cpu_bound", "gpu_kernel_launch_overhead", ...); "" for kNone.
std::string_view CpBoundName(CpBound bound);

inline constexpr uint32_t kCpNoEvent = UINT32_MAX;

class CpGraph {
 public:
  // Nodes, by index.
  std::vector<int64_t> node_ts;      // ns
  std::vector<uint32_t> node_event;  // the event (an index into its trace's events)
  std::vector<uint8_t> node_is_start;
  // Edges, by index, in the order they were first added (the longest path breaks ties by it).
  std::vector<uint32_t> edge_src, edge_dst;
  std::vector<int64_t> edge_weight;  // ns
  std::vector<CpEdgeType> edge_type;
  std::vector<uint32_t> edge_event;  // the event the edge's time is attributed to, or kCpNoEvent
  std::vector<CpBound> edge_bound;   // what the edge counts as on a path (set by the builder)

  size_t node_count() const { return node_ts.size(); }
  size_t edge_count() const { return edge_src.size(); }

  uint32_t AddNode(int64_t ts, uint32_t event, bool is_start);
  // Adds src -> dst. An edge already between them is replaced in place (networkx's add_edge on
  // a DiGraph keeps one edge per pair); its attribution stays when the new edge has none.
  uint32_t AddEdge(uint32_t src, uint32_t dst, CpEdgeType type, int64_t weight,
                   uint32_t event = kCpNoEvent);
  // The edge src -> dst, or UINT32_MAX.
  uint32_t FindEdge(uint32_t src, uint32_t dst) const;

 private:
  std::unordered_map<uint64_t, uint32_t> edge_of_pair_;
};

// An edge weight that removes the edge (for CpPathOptions::weights).
inline constexpr int64_t kCpRemovedEdge = INT64_MIN;

struct CpPath {
  int64_t length_ns = 0;        // the sum of the path's edge weights
  std::vector<uint32_t> nodes;  // in path order
  std::vector<uint32_t> edges;  // edges[i] joins nodes[i] and nodes[i + 1]
};

// The longest path of the graph, as networkx's dag_longest_path finds it (so that ties resolve
// as HTA's do): for each node in topological order (Kahn's, generation by generation, starting
// from the nodes without incoming edges in the order they first appear in the edge list; nodes
// on no edge take no part), the best of its incoming edges in insertion order, the first one on
// a tie; a node whose best is negative starts a path; the path ends at the first node (in that
// order) with the largest distance. `weights`, when not empty, replaces every edge's weight (one
// per edge; kCpRemovedEdge drops the edge); negative weights count as 0, as HTA's _validate_graph
// makes them. Fails on a cycle, naming one edge on it.
Result<CpPath> LongestPath(const CpGraph& graph, std::span<const int64_t> weights = {});

}  // namespace profsh
