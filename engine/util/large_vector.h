// Vectors for columns of millions of elements. Their storage comes from mmap with transparent
// huge pages requested, so that filling a column takes one page fault per 2 MiB instead of one
// per 4 KiB (on the virtual machines profsh runs on, faults cost more than the work itself).
// Small vectors use the ordinary allocator.
//
// Freed blocks are kept for reuse (at most kLargeBlockCacheBytes, marked MADV_FREE so that the
// kernel can still take their pages back under memory pressure): an analysis allocates and frees
// the same large columns every time it runs, and zeroing fresh pages costs these machines about
// as much as the analysis itself. Loading a trace (any format, and each window of a recording)
// trims the cache, so that what a loaded trace holds is its data, not the blocks its columns
// outgrew; until then, up to kLargeBlockCacheBytes of freed blocks stay resident unless the
// kernel takes them back.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace profsh {

inline constexpr size_t kLargeBlockThreshold = size_t{4} << 20;
inline constexpr size_t kLargeBlockCacheBytes = size_t{1} << 30;

// Throws std::bad_alloc when the system has no memory left.
void* AllocateLargeBlock(size_t bytes);
void FreeLargeBlock(void* p, size_t bytes);
// Returns every cached block to the system; returns the bytes that were cached.
size_t TrimLargeBlockCache();

template <typename T>
class LargeAllocator {
 public:
  using value_type = T;
  LargeAllocator() = default;
  template <typename U>
  LargeAllocator(const LargeAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    size_t bytes = n * sizeof(T);
    if (bytes < kLargeBlockThreshold) return static_cast<T*>(::operator new(bytes));
    return static_cast<T*>(AllocateLargeBlock(bytes));
  }
  void deallocate(T* p, size_t n) {
    size_t bytes = n * sizeof(T);
    if (bytes < kLargeBlockThreshold) {
      ::operator delete(p);
    } else {
      FreeLargeBlock(p, bytes);
    }
  }
  template <typename U>
  bool operator==(const LargeAllocator<U>&) const {
    return true;
  }
};

template <typename T>
using LargeVector = std::vector<T, LargeAllocator<T>>;

// Gives the pages of a vector's reserved but unused capacity back to the system (a reserve made
// for the worst case, or the rest of the last huge page); the capacity stays reserved.
void ReleaseUnusedPages(void* data, size_t used_bytes, size_t capacity_bytes);
// A small vector's spare capacity is heap memory, which only a copy gives back: it is shrunk
// (under 4 MiB, a cheap copy).
template <typename T>
void ReleaseUnusedCapacity(LargeVector<T>& v) {
  if (v.capacity() * sizeof(T) >= kLargeBlockThreshold) {
    ReleaseUnusedPages(v.data(), v.size() * sizeof(T), v.capacity() * sizeof(T));
  } else if (v.capacity() > v.size()) {
    v.shrink_to_fit();
  }
}

// The memory a column holds. A small column (from the heap) holds its whole capacity. A large one
// (its own mapping) holds its used part rounded up to a 2 MiB huge page, at most its capacity:
// the rest is address space, a reserve never touched (the JSON importer's, made from the file's
// size for the densest input, was several times the events) or given back once the column is
// complete (ReleaseUnusedCapacity); the whole huge page is counted because the kernel may merge
// a released tail back into one.
size_t HeldBytes(size_t used_bytes, size_t capacity_bytes);
template <typename T>
size_t HeldBytes(const LargeVector<T>& v) {
  return HeldBytes(v.size() * sizeof(T), v.capacity() * sizeof(T));
}

}  // namespace profsh
