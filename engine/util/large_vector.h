// Vectors for columns of millions of elements. Their storage comes from mmap with transparent
// huge pages requested, so that filling a column takes one page fault per 2 MiB instead of one
// per 4 KiB (on the virtual machines profsh runs on, faults cost more than the work itself).
// Small vectors use the ordinary allocator.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <vector>

namespace profsh {

template <typename T>
class LargeAllocator {
 public:
  using value_type = T;
  LargeAllocator() = default;
  template <typename U>
  LargeAllocator(const LargeAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    size_t bytes = n * sizeof(T);
    if (bytes < kThreshold) return static_cast<T*>(::operator new(bytes));
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    size_t bytes = n * sizeof(T);
    if (bytes < kThreshold) {
      ::operator delete(p);
    } else {
      munmap(p, bytes);
    }
  }
  template <typename U>
  bool operator==(const LargeAllocator<U>&) const {
    return true;
  }

 private:
  static constexpr size_t kThreshold = size_t{4} << 20;
};

template <typename T>
using LargeVector = std::vector<T, LargeAllocator<T>>;

}  // namespace profsh
