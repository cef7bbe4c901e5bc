// Collectives that a backend runs on its own threads (gloo's gloo:all_reduce ranges), which
// HTA's graph leaves out (they are record_function ranges, not operators): the cross-rank linker
// adds them to a rank's graph, joined to the operator on the calling thread that issued them
// (c10d::allreduce_ or record_param_comms) and to what that thread did once it had waited for
// them, so that the ranks can be linked there. docs/ANALYSIS.md ("Critical path across ranks")
// gives the rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/analysis/critical_path/cp_graph.h"
#include "engine/analysis/ranks.h"
#include "engine/trace/trace.h"

namespace profsh {

struct WorkerCollectiveCounts {
  size_t joined = 0;  // ranges added, joined to their issuing operator
  size_t waited = 0;  // of those, the ones the issuing thread waited for
};

// The operators that issue a collective on the calling thread: record_param_comms and the
// dispatcher's c10d:: ops (CollectiveCallsOf's kParamComms and kDispatcherOp calls).
std::vector<CollectiveCall> CollectiveIssuers(const Trace& trace,
                                              const std::vector<int32_t>& rank_of_track);

// Adds to `graph` (rank `rank`'s graph of `trace`) every host call of `calls` on that rank that
// has no node in the graph and starts within the graph's nodes' times, when an operator of
// `issuers` issued it. Issuers and calls pair first in, first out per collective name over the
// rank's whole trace (a call takes the earliest issuer not yet taken that starts no later than
// it), and the call is added when its issuer has nodes in the graph. For each:
//   - a start and an end node at the call's times, and an edge between them (kOperatorKernel,
//     attributed to the call, bound_by cpu_communication_bound);
//   - an edge from the issuer's start to the call's start (kOperatorKernel, attributed to the
//     issuer, cpu_bound): the operator's time and the worker thread's pick-up;
//   - when the call ends after its issuer and the issuing thread started nothing else from the
//     issuer's end to the call's end (it waited for the collective), an edge from the call's end to the thread's first node at or
//     after it (kSyncDependency, weight 0), and the thread's own edge into that node keeps only
//     the time after the call's end.
// Calls without an issuer are left as they are (the linker counts them).
WorkerCollectiveCounts AddWorkerCollectives(CpGraph& graph, const Trace& trace, int32_t rank,
                                            std::span<const CollectiveCall> calls,
                                            std::span<const CollectiveCall> issuers);

}  // namespace profsh
