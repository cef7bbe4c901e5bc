// Native call stacks from a StackSnapshot, unwound in the profsh process (never in the
// workload): DWARF CFI (.eh_frame / .debug_frame) where the modules have it, frame pointers
// otherwise. Files are opened and their unwind tables parsed once per (path, build id).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/symbols/address_space.h"
#include "engine/symbols/stack_snapshot.h"

namespace profsh::symbols {

struct UnwoundFrame {
  uint64_t pc = 0;
  // True for every frame but the sampled one: pc is a return address, so symbolisation looks
  // up pc - 1 (the call) rather than the instruction after it.
  bool is_return_address = false;
};

struct UnwindStats {
  uint64_t samples = 0;
  uint64_t frames = 0;
  uint64_t truncated = 0;  // stopped early: stack copy too short, no CFI and no frame pointer
};

// Not thread-safe (its caches change on every call): one per decoding thread.
class Unwinder {
 public:
  Unwinder();
  ~Unwinder();
  Unwinder(const Unwinder&) = delete;
  Unwinder& operator=(const Unwinder&) = delete;

  // Innermost frame first. Never throws; an address outside every mapping ends the walk (the
  // frame itself is kept).
  std::vector<UnwoundFrame> Unwind(const AddressSpace& space, const StackSnapshot& snapshot,
                                   size_t max_depth = 256);
  const UnwindStats& stats() const { return stats_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  UnwindStats stats_;
};

}  // namespace profsh::symbols
