// Device work to what launched it, by ids: newer Kineto gives kernels their op's External id,
// older Kineto only the runtime call's correlation (the op is then that call's parent, known once
// the events are nested). Runtime calls linked to an op on another thread move to its thread.
#include "engine/analysis/function_events/builder.h"
#include "engine/util/parallel.h"

namespace profsh {

// Newer Kineto (External id != correlation): the device work names its op; the runtime call
// moves to that op's thread, as torch's _parse_kineto_results does. Older Kineto: the runtime call
// with the same correlation, whose parent (known once nested) is the op.
void FunctionEventsBuilder::LinkDeviceWork(const IdIndex& op_by_external,
                                           const IdIndex& runtime_by_correlation) {
  link_op_.assign(links_.size(), -1);
  runtime_of_link_.assign(links_.size(), -1);
  // The lookups are independent and go to random places: they run in parts. Moving runtime
  // calls to their op's thread writes shared state, so it comes after, in one pass.
  const size_t parts = PartsFor(links_.size());
  RunInParts(parts, [&](size_t part) {
    for (size_t k = PartBegin(links_.size(), part, parts),
                end = PartEnd(links_.size(), part, parts);
         k < end; ++k) {
      const DeviceLink& d = links_[k];
      if (d.has_correlation) runtime_of_link_[k] = runtime_by_correlation.Find(d.correlation);
      if (d.has_external && (!d.has_correlation || d.external != d.correlation)) {
        link_op_[k] = op_by_external.Find(d.external);
      }
    }
  });
  for (size_t k = 0; k < links_.size(); ++k) {
    const int32_t op = link_op_[k], runtime = runtime_of_link_[k];
    if (op < 0 || runtime < 0) continue;
    const LargeVector<uint32_t>& thread = thread_.empty() ? f_.track_ : thread_;
    if (thread[runtime] != thread[op]) {
      if (thread_.empty()) thread_ = f_.track_;
      thread_[runtime] = thread_[op];
    }
  }
}

}  // namespace profsh
