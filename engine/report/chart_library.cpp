#include "engine/report/chart_library.h"

#include <cstddef>

// The minified library, embedded as it is (1 MB; a C++ string literal of that size is slow to
// compile and past some compilers' limits). PROFSH_CHART_LIBRARY_JS is set by the build.
asm(".section .rodata\n"
    ".balign 16\n"
    ".global profsh_chart_library_begin\n"
    "profsh_chart_library_begin:\n"
    ".incbin \"" PROFSH_CHART_LIBRARY_JS
    "\"\n"
    ".global profsh_chart_library_end\n"
    "profsh_chart_library_end:\n"
    ".byte 0\n"
    ".previous\n");

extern "C" const char profsh_chart_library_begin[];
extern "C" const char profsh_chart_library_end[];

namespace profsh::report {

std::string_view ChartLibrarySource() {
  return std::string_view(
      profsh_chart_library_begin,
      static_cast<size_t>(profsh_chart_library_end - profsh_chart_library_begin));
}

std::string_view ChartLibraryVersion() {
  return PROFSH_CHART_LIBRARY_VERSION;
}

}  // namespace profsh::report
