// Differential: a trace that loads is exported to Chrome JSON and to the profsh format, read
// back, and must give the same operator tables. A difference aborts with both tables.
#include <cstdio>
#include <cstdlib>

#include "engine/exporters/exporter.h"
#include "engine/io/input_source.h"
#include "engine/load/trace_loader.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

void CheckSame(const std::string& want, const profsh::Trace& original, const char* format) {
  using namespace profsh;
  const std::string path = fuzz::ScratchPath(format);
  Status s = ExportTrace(original, format, path);
  if (!s.ok()) {
    std::fprintf(stderr, "export to %s failed: %s\n", format, s.message().c_str());
    std::abort();
  }
  auto back = LoadTrace(path);
  std::remove(path.c_str());
  if (!back.ok()) {
    std::fprintf(stderr, "the %s export does not load: %s\n", format, back.error().message.c_str());
    std::abort();
  }
  const std::string got = fuzz::Tables(*back.value());
  if (got != want) {
    std::fprintf(stderr, "the %s export gives other tables\n--- loaded\n%s\n--- read back\n%s\n",
                 format, want.c_str(), got.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profsh;
  auto trace = fuzz::LoadInput(data, size);
  if (!trace.ok()) return 0;
  const std::string want = fuzz::Tables(*trace.value());
  CheckSame(want, *trace.value(), "chrome");
  CheckSame(want, *trace.value(), "profsh");
  return 0;
}
