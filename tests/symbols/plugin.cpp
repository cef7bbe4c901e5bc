// The shared library target_cxx loads with dlopen: it calls back into the program from a
// template, so a sample there has frames in both modules.
namespace plugin {

template <typename T>
__attribute__((noinline)) T Accumulate(T (*callback)(T), T seed) {
  T r = callback(seed);  // @plugin-call-callback
  __asm__ volatile("" ::: "memory");
  return r + seed;
}

}  // namespace plugin

extern "C" __attribute__((visibility("default"), noinline)) int plugin_compute(int (*callback)(int),
                                                                               int seed) {
  int r = plugin::Accumulate<int>(callback, seed);  // @plugin-call-accumulate
  __asm__ volatile("" ::: "memory");
  return r * 2;
}
