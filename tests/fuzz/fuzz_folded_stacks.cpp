// Folded stacks (flamegraph.pl's input): parsing, sorting and the differential profile of the
// input against itself halved.
#include <string>

#include "engine/flamegraph/folded_stacks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profsh;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t half = size / 2;
  auto before = FoldedStacks::Parse(text.substr(0, half), "before");
  auto after = FoldedStacks::Parse(text.substr(half), "after");
  if (before.ok()) before.value().Sort();
  if (after.ok()) after.value().Sort();
  if (before.ok() && after.ok()) {
    FoldedStacks diff = FoldedStacks::Difference(before.value(), after.value(), true);
    diff.Sort();
  }
  return 0;
}
