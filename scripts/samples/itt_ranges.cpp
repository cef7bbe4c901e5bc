// libitt_ranges.so: torch.profiler.itt.range_push/range_pop for Python builds of PyTorch
// without ITT (Debian's among them), so that the seed ITT sample (scripts/itt_sample.py) still
// announces its iteration_N ranges through ITT. It makes the calls PyTorch's ITT wrapper makes
// (a "PyTorch" domain, a string handle per name, __itt_task_begin/__itt_task_end) through an
// ITT static part, so the ranges reach whichever ITT collector INTEL_LIBITTNOTIFY64 names
// (profsh's, VTune's) and cost nothing without one. Loaded with ctypes.
#include "scripts/samples/itt_static_part.h"

namespace {

using Itt = itt_client::StaticPart<0>;
const itt_client::Id kNullId{0, 0, 0};

itt_client::Domain* Domain() {
  static itt_client::Domain* domain = [] {
    Itt::Setup();
    return Itt::domain_create("PyTorch");
  }();
  return domain;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void itt_range_push(const char* name) {
  itt_client::Domain* d = Domain();
  if (Itt::task_begin) Itt::task_begin(d, kNullId, kNullId, Itt::string_handle_create(name));
}

extern "C" __attribute__((visibility("default"))) void itt_range_pop() {
  itt_client::Domain* d = Domain();
  if (Itt::task_end) Itt::task_end(d);
}
