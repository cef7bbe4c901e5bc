// libc functions the runtime wraps when it is preloaded: the exec family (flush the stream and
// keep profsh's variables in the new image's environment) and _exit (which skips atexit and
// destructors, and is how Python's multiprocessing children end). Each wrapper then calls the
// real function with the same arguments (exec's environment gains profsh's variables back), so
// what the program sees of these calls does not change. With the cpu activity's timer fallback,
// the pthread_create wrapper starts each thread with a CPU-time timer whose signal interrupts
// it: that does change what the thread sees, as any signal does: poll, select, epoll_wait,
// nanosleep and the others signal(7) lists are not restarted by SA_RESTART and may return EINTR
// early (README, docs/INTERNALS.md).
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pthread.h>
#include <stdlib.h>

#include "engine/collector/runtime/process.h"
#include "engine/collector/runtime/timer_sampler.h"
#include "engine/stream/stream_format.h"

extern char** environ;

namespace {

using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvpeFn = int (*)(const char*, char* const[], char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);
using ExitFn = void (*)(int);

template <typename Fn>
Fn Next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// Resolved once at load, so that a vfork child never runs the dynamic linker.
ExecveFn g_execve = Next<ExecveFn>("execve");
ExecvpeFn g_execvpe = Next<ExecvpeFn>("execvpe");
FexecveFn g_fexecve = Next<FexecveFn>("fexecve");
ExitFn g_exit = Next<ExitFn>("_exit");
ExitFn g_Exit = Next<ExitFn>("_Exit");
using PthreadCreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
PthreadCreateFn g_pthread_create = Next<PthreadCreateFn>("pthread_create");

// The cpu activity's timer fallback gives each new thread its CPU-time timer before the
// thread's own code runs.
struct ThreadStart {
  void* (*routine)(void*);
  void* arg;
};
void* StartSampledThread(void* p) {
  ThreadStart start = *static_cast<ThreadStart*>(p);
  free(p);
  profsh::runtime::StartThreadTimer();
  return start.routine(start.arg);
}

size_t CountEntries(char* const* v) {
  size_t n = 0;
  while (v && v[n]) ++n;
  return n;
}

constexpr size_t kExtraEnv = 10;

int DoExecve(const char* path, char* const argv[], char* const envp[]) {
  char** room =
      static_cast<char**>(__builtin_alloca((CountEntries(envp) + kExtraEnv) * sizeof(char*)));
  char** env = profsh::runtime::EnvironmentForExec(envp, room, CountEntries(envp) + kExtraEnv);
  profsh::runtime::BeforeExec(path);
  int r =
      g_execve ? g_execve(path, argv, env) : static_cast<int>(syscall(SYS_execve, path, argv, env));
  profsh::runtime::ExecFailed();
  return r;
}

int DoExecvpe(const char* file, char* const argv[], char* const envp[]) {
  char** room =
      static_cast<char**>(__builtin_alloca((CountEntries(envp) + kExtraEnv) * sizeof(char*)));
  char** env = profsh::runtime::EnvironmentForExec(envp, room, CountEntries(envp) + kExtraEnv);
  profsh::runtime::BeforeExec(file);
  int r = g_execvpe ? g_execvpe(file, argv, env) : -1;
  profsh::runtime::ExecFailed();
  return r;
}

// The argument list of execl and friends, up to the terminating NULL, on the stack.
#define PROFSH_COLLECT_ARGS(first, args_out)                                                       \
  size_t count_##args_out = 1;                                                                     \
  {                                                                                                \
    va_list count_ap;                                                                              \
    va_start(count_ap, first);                                                                     \
    while (va_arg(count_ap, const char*) != nullptr) ++count_##args_out;                           \
    va_end(count_ap);                                                                              \
  }                                                                                                \
  char** args_out = static_cast<char**>(__builtin_alloca((count_##args_out + 1) * sizeof(char*))); \
  {                                                                                                \
    va_list ap;                                                                                    \
    va_start(ap, first);                                                                           \
    args_out[0] = const_cast<char*>(first);                                                        \
    for (size_t i = 1; i <= count_##args_out; ++i) args_out[i] = va_arg(ap, char*);                \
    va_end(ap);                                                                                    \
  }

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int pthread_create(pthread_t* thread,
                                                          const pthread_attr_t* attr,
                                                          void* (*routine)(void*), void* arg) {
  // The runtime's own constructor may create its drain thread before this file's initializers.
  if (g_pthread_create == nullptr) g_pthread_create = Next<PthreadCreateFn>("pthread_create");
  if (g_pthread_create == nullptr) return EAGAIN;
  if (profsh::runtime::TimerSamplingActive()) {
    if (auto* start = static_cast<ThreadStart*>(malloc(sizeof(ThreadStart)))) {
      *start = ThreadStart{routine, arg};
      const int r = g_pthread_create(thread, attr, StartSampledThread, start);
      if (r != 0) free(start);
      return r;
    }
  }
  return g_pthread_create(thread, attr, routine, arg);
}

__attribute__((visibility("default"))) int execve(const char* path, char* const argv[],
                                                  char* const envp[]) {
  return DoExecve(path, argv, envp);
}

__attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  return DoExecve(path, argv, environ);
}

__attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[],
                                                   char* const envp[]) {
  return DoExecvpe(file, argv, envp);
}

__attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  return DoExecvpe(file, argv, environ);
}

__attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  PROFSH_COLLECT_ARGS(arg, argv);
  return DoExecve(path, argv, environ);
}

__attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  PROFSH_COLLECT_ARGS(arg, argv);
  return DoExecvpe(file, argv, environ);
}

__attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  PROFSH_COLLECT_ARGS(arg, argv);
  va_list ap;
  va_start(ap, arg);
  while (va_arg(ap, const char*) != nullptr) {
  }
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return DoExecve(path, argv, envp);
}

__attribute__((visibility("default"))) int fexecve(int fd, char* const argv[], char* const envp[]) {
  char** room =
      static_cast<char**>(__builtin_alloca((CountEntries(envp) + kExtraEnv) * sizeof(char*)));
  char** env = profsh::runtime::EnvironmentForExec(envp, room, CountEntries(envp) + kExtraEnv);
  profsh::runtime::BeforeExec("(fexecve)");
  int r = g_fexecve ? g_fexecve(fd, argv, env) : -1;
  profsh::runtime::ExecFailed();
  return r;
}

__attribute__((visibility("default"), noreturn)) void _exit(int status) {
  profsh::runtime::Shutdown(profsh::stream::kEndUnderscoreExit);
  if (g_exit) g_exit(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status) {
  profsh::runtime::Shutdown(profsh::stream::kEndUnderscoreExit);
  if (g_Exit) g_Exit(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

}  // extern "C"
