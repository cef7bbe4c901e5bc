// Every trace reader behind content detection: Kineto/Chrome JSON (plain, and gzip through a
// file as users hand them), the profsh format, a collector stream; then the analyses.
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto trace = profsh::fuzz::LoadInput(data, size);
  if (trace.ok()) profsh::fuzz::Analyse(*trace.value());
  return 0;
}
