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
# Step markers as regular expressions: std::regex reports a malformed expression only by
# throwing, so these are built with exceptions (the rest of the runtime is built without), into
# an archive of their own, whose std:: instantiations --exclude-libs,ALL keeps out of the
# library's exports.
set(PROFSH_COLLECTOR_EXCEPTION_SOURCES ../stream/step_regex.cpp)
