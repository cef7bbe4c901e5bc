// Anonymous and shared mappings made by the collector itself. They go straight to the kernel:
// with profile_memory, libprofsh_memory.so interposes mmap, and the collector's own rings and
// tables are not the workload's memory (reporting them would also re-enter the collector while
// it claims a thread slot).
#pragma once

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>

// The ThreadSanitizer build of the collector (tests/races) maps through libc instead: TSan's
// mmap places the mapping where it keeps shadow memory, and a mapping the kernel placed anywhere
// crashed the first instrumented access to it (SIGBUS in about half the runs). Memory hooks are
// not used under TSan (its malloc comes first), so nothing interposes mmap there.
#if defined(__SANITIZE_THREAD__)
#define PROFSH_RAW_MAP_VIA_LIBC 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PROFSH_RAW_MAP_VIA_LIBC 1
#endif
#endif

namespace profsh::runtime {

inline void* RawMap(size_t bytes, int prot, int flags, int fd = -1) {
#ifdef PROFSH_RAW_MAP_VIA_LIBC
  return mmap(nullptr, bytes, prot, flags, fd, 0);
#else
  return reinterpret_cast<void*>(syscall(SYS_mmap, nullptr, bytes, prot, flags, fd, 0));
#endif
}

inline int RawUnmap(void* p, size_t bytes) {
#ifdef PROFSH_RAW_MAP_VIA_LIBC
  return munmap(p, bytes);
#else
  return static_cast<int>(syscall(SYS_munmap, p, bytes));
#endif
}

}  // namespace profsh::runtime
