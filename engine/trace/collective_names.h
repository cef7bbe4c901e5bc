// Which host-side names are collectives: torch's record_param_comms, the backends' own ranges
// (gloo:*, nccl:*), the dispatcher's c10d ops, and NCCL's own NVTX ranges (ncclAllReduce, ...).
// Read by the collective matching across ranks (analysis/ranks) and by the watchdog's report of
// the last collectives each process entered (decoding/hang_watch).
#pragma once

#include <cstdint>
#include <string_view>

namespace profsh {

// In order of preference when a trace holds several kinds (the most exact first).
enum class CollectiveNameKind : uint8_t {
  kNone,
  kParamComms,    // record_param_comms
  kHostOp,        // gloo:*, nccl:*
  kDispatcherOp,  // c10d::* (c10d::barrier included; callers that match calls may leave it out)
  kNcclApi,       // NCCL's NVTX ranges: ncclAllReduce, ncclBroadcast, ...
};

inline CollectiveNameKind CollectiveNameKindOf(std::string_view n) {
  if (n == "record_param_comms") return CollectiveNameKind::kParamComms;
  if (n.starts_with("gloo:") || n.starts_with("nccl:")) return CollectiveNameKind::kHostOp;
  if (n.starts_with("c10d::")) return CollectiveNameKind::kDispatcherOp;
  if (n.size() > 4 && n.starts_with("nccl") && n[4] >= 'A' && n[4] <= 'Z')
    return CollectiveNameKind::kNcclApi;
  return CollectiveNameKind::kNone;
}

}  // namespace profsh
