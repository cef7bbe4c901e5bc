/* profsh's C API for programs: header-only, no library to link (dlsym comes with libc on
 * current glibc; add -ldl on older ones). When the program does not run under profsh every
 * call is a no-op.
 *
 *   #include "profsh.h"
 *   for (...) { profsh_step(); train_one_step(); }
 *
 * profsh_step() marks the start of a step, for profsh's schedules
 * (profsh run --schedule ..., profsh.profile{schedule=...}) and on-demand tracing, where no
 * ProfilerStep#N range or other step marker announces the steps. */
#ifndef PROFSH_H_
#define PROFSH_H_

#include <dlfcn.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*profsh_step_fn)(void);

/* No-op when the collector is not injected. */
static inline void profsh_no_step(void) {}

/* Resolved once: the collector exports profsh_collector_step when it is injected. One pointer,
 * read and written atomically, so that no thread sees a half-done resolution. */
static inline profsh_step_fn profsh_resolve_step(void) {
  static profsh_step_fn fn = 0;
  profsh_step_fn f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);
  if (!f) {
    f = (profsh_step_fn)dlsym(RTLD_DEFAULT, "profsh_collector_step");
    if (!f) f = profsh_no_step;
    __atomic_store_n(&fn, f, __ATOMIC_RELEASE);
  }
  return f;
}

static inline void profsh_step(void) {
  profsh_resolve_step()();
}

#ifdef __cplusplus
}
#endif

#endif /* PROFSH_H_ */
