# The injected runtime's sources, relative to engine/collector: one list for the library built
# here and for the ThreadSanitizer build of the race tests (tests/races/CMakeLists.txt).
set(PROFSH_COLLECTOR_SOURCES
  runtime/events.cpp
  runtime/string_table.cpp
  runtime/registry.cpp
  runtime/drain.cpp
  runtime/process.cpp
  runtime/memory_scope.cpp
  runtime/interpose.cpp
  runtime/nvtx_source.cpp
  runtime/itt_source.cpp
  runtime/steps.cpp
  ../stream/pattern.cpp
  runtime/torch_api.cpp
  runtime/timer_sampler.cpp
  runtime/cupti_source.cpp
)
