// Anonymous and shared mappings made by the collector itself. They go straight to the kernel:
// with profile_memory, libprofsh_memory.so interposes mmap, and the collector's own rings and
// tables are not the workload's memory (reporting them would also re-enter the collector while
// it claims a thread slot).
#pragma once

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>

namespace profsh::runtime {

inline void* RawMap(size_t bytes, int prot, int flags, int fd = -1) {
  return reinterpret_cast<void*>(syscall(SYS_mmap, nullptr, bytes, prot, flags, fd, 0));
}

inline int RawUnmap(void* p, size_t bytes) {
  return static_cast<int>(syscall(SYS_munmap, p, bytes));
}

}  // namespace profsh::runtime
