/* A C program that samples itself (snapshot_capture.h) under main -> outer -> middle ->
 * leaf_inlined (inlined into middle). Built twice: with CFI and no frame pointer, and with
 * frame pointers and no unwind tables at all. The unit tests find lines by the @ markers. */
#include <stdio.h>

#include "snapshot_capture.h"

volatile int g_sink;

static inline __attribute__((always_inline)) int leaf_inlined(int x) {
  PROFSH_SAMPLE_POINT();
  g_sink = g_sink + x; /* @c-sample: the trap resumes here, the sampled pc */
  return g_sink * 3;
}

__attribute__((noinline)) int record(int y) { return y + g_sink; }

/* It calls record(): GCC gives a function that calls nothing no frame of its own, even with
 * -fno-omit-frame-pointer, and a frame-pointer walk from a sample there misses its caller. */
__attribute__((noinline)) int middle(int x) {
  int y = leaf_inlined(x + 1); /* @c-call-leaf */
  y += record(y);
  __asm__ volatile("" ::: "memory");
  return y + g_sink;
}

__attribute__((noinline)) int outer(int x) {
  int y = middle(x * 2); /* @c-call-middle */
  __asm__ volatile("" ::: "memory");
  return y - 1;
}

static volatile int g_from_signal;

/* With "signal": the sample is taken inside a signal handler, so the walk crosses the kernel's
 * signal frame (libc's __restore_rt, whose CFI restores every register from the ucontext). */
static void on_signal(int sig) {
  g_from_signal = outer(sig); /* @c-call-outer-in-handler */
  __asm__ volatile("" ::: "memory");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s SNAPSHOT_FILE [signal]\n", argv[0]);
    return 2;
  }
  profsh_capture_install(argv[1]);
  if (argc > 2 && strcmp(argv[2], "signal") == 0) {
    signal(SIGUSR1, on_signal);
    raise(SIGUSR1); /* @c-call-raise */
    __asm__ volatile("" ::: "memory");
    return g_from_signal == 12345 ? 1 : 0;
  }
  int r = outer(argc); /* @c-call-outer */
  __asm__ volatile("" ::: "memory");
  return r == 12345 ? 1 : 0;
}
