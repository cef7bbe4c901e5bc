// A distributed job's critical path graph: every rank's graph (HTA's, cp_graph.h) side by side,
// linked at each collective the ranks call together, so that the job's path can leave a rank
// that waits in a collective for the rank that arrived last, and name the straggler's work.
// docs/ANALYSIS.md ("Critical path across ranks") gives the rules.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/analysis/critical_path/cp_graph.h"
#include "engine/trace/trace.h"

namespace profsh {

// One rank's graph and the trace its events index into (the whole job's trace, or the rank's own
// part of it). `clock_offset_ns` moves the rank's times onto the job's clock (0 when the graph
// was built on the job's trace).
struct RankGraphInput {
  int32_t rank = 0;
  const Trace* trace = nullptr;
  CpGraph graph;
  int64_t clock_offset_ns = 0;
};

inline constexpr uint16_t kJobNoPart = UINT16_MAX;

struct JobPart {
  int32_t rank;
  const Trace* trace;
  int64_t clock_offset_ns;
  uint32_t node_begin, node_end;  // this rank's nodes in the job graph
};

// Where each node of a job's graph comes from: its rank, and the trace its event indexes into.
struct JobLayout {
  std::vector<uint16_t> node_part;  // the rank (an index into parts) of each node; kJobNoPart
                                    // for a collective's meeting node
  std::vector<JobPart> parts;
  size_t linked_collectives = 0;
  // Collectives called by a single rank in the graphs' windows, or twice by one rank.
  size_t unlinked_collectives = 0;
  // Collective calls in a rank's window whose event has no node in its graph, even after the
  // worker threads' collectives were added (one whose issuing operator is not in the graph).
  size_t calls_outside_graph = 0;
  // Collectives run on a backend's own threads (gloo's gloo:all_reduce ranges, which HTA's graph
  // leaves out) added to their rank's graph, joined to the operators that issued them
  // (cp_worker_collectives.h); and of those, the ones their issuing thread waited for.
  size_t worker_collectives = 0, worker_collectives_waited = 0;

  // The part an edge's time belongs to: its source's, or its end's for a link out of a meeting
  // node.
  uint16_t EdgePart(const CpGraph& g, uint32_t edge) const {
    const uint16_t p = node_part[g.edge_src[edge]];
    return p != kJobNoPart ? p : node_part[g.edge_dst[edge]];
  }
  // The part of a rank, or kJobNoPart.
  uint16_t PartOfRank(int32_t rank) const {
    for (size_t p = 0; p < parts.size(); ++p)
      if (parts[p].rank == rank) return static_cast<uint16_t>(p);
    return kJobNoPart;
  }
};

struct JobGraph {
  // The ranks' nodes one rank after another (each rank's in its own order, times on the job's
  // clock), then one meeting node per linked collective; each rank's edges in its own order, then
  // the links.
  CpGraph graph;
  JobLayout layout;
};

// Joins the ranks' graphs (in the order given) and links them at their collectives, matched as
// t:collectives() matches them (engine/analysis/ranks.h: group, name, then the NCCL sequence
// number or the call's place among its rank's calls); a call that a backend runs on its own
// thread (gloo) is first added to its rank's graph (AddWorkerCollectives). For a collective
// called by ranks P, with
// start node s_p and end node e_p on each, and L the rank that started it last:
//   - a meeting node M at L's start, with an edge s_p -> M (kSyncDependency, weight 0) from every
//     rank: the collective can complete only once every rank has arrived;
//   - an edge M -> e_p (kOperatorKernel, attributed to p's call) weighing e_p - s_L, the time it
//     ran after the last arrival;
//   - the call's own last edge into e_p loses the time p waited for L (s_L - s_p), so that the
//     wait is found on L's path rather than counted as communication on p's.
JobGraph LinkRanks(std::vector<RankGraphInput> ranks);

// The job's graph with one more node that every node of `part` leads to, so that LongestPath's
// path ends on that rank (the sink's edges weigh kCpSinkBias, which PathEndingOnPart takes off).
struct SinkedGraph {
  CpGraph graph;
  uint32_t sink;
};
inline constexpr int64_t kCpSinkBias = int64_t{1} << 52;
SinkedGraph WithSinkOnPart(const CpGraph& graph, const JobLayout& layout, uint16_t part);
// The longest path of `sinked` under `weights` (one per edge of the job's graph, or empty), less
// the sink: the path that ends on that rank.
Result<CpPath> PathEndingOnPart(const SinkedGraph& sinked, std::span<const int64_t> weights);

}  // namespace profsh
