// A C++ program that samples itself (snapshot_capture.h) from a callback called by a shared
// library it loads with dlopen: main -> profsh_test::Runner::Run -> plugin_compute (library)
// -> plugin::Accumulate<int> (library) -> profsh_test::SampleHere -> profsh_test::InlinedLeaf
// (inlined). The unit tests find lines by the @ markers.
#include <dlfcn.h>

#include <cstdio>

#include "snapshot_capture.h"

volatile int g_sink;

namespace profsh_test {

static inline __attribute__((always_inline)) int InlinedLeaf(int x) {
  PROFSH_SAMPLE_POINT();
  g_sink = g_sink + x;  // @cxx-sample: the trap resumes here, the sampled pc
  return g_sink * 3;
}

__attribute__((noinline)) int SampleHere(int x) {
  int y = InlinedLeaf(x + 1);  // @cxx-call-leaf
  __asm__ volatile("" ::: "memory");
  return y + g_sink;
}

class Runner {
 public:
  __attribute__((noinline)) int Run(const char* library);
};

int Runner::Run(const char* library) {
  void* handle = dlopen(library, RTLD_NOW);
  if (handle == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", library, dlerror());
    return -1;
  }
  using Compute = int (*)(int (*)(int), int);
  auto compute = reinterpret_cast<Compute>(dlsym(handle, "plugin_compute"));
  if (compute == nullptr) return -1;
  int r = compute(&SampleHere, 7);  // @cxx-call-plugin
  __asm__ volatile("" ::: "memory");
  return r;
}

}  // namespace profsh_test

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SNAPSHOT_FILE PLUGIN_LIBRARY\n", argv[0]);
    return 2;
  }
  profsh_capture_install(argv[1]);
  profsh_test::Runner runner;
  int r = runner.Run(argv[2]);  // @cxx-call-run
  __asm__ volatile("" ::: "memory");
  return r < 0 ? 1 : 0;
}
