#include "engine/util/large_vector.h"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>

namespace profsh {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;

size_t MappedSize(size_t bytes) {
  return (bytes + kHugePage - 1) / kHugePage * kHugePage;
}

struct Block {
  void* p = nullptr;
  size_t bytes = 0;
};

// A few dozen blocks, best fit. Analyses run on one thread at a time and never on the
// collector's path, so a mutex costs nothing here.
class BlockCache {
 public:
  void* Take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    Block* best = nullptr;
    for (Block& b : blocks_) {
      if (b.p != nullptr && b.bytes >= bytes && (best == nullptr || b.bytes < best->bytes))
        best = &b;
    }
    if (best == nullptr) return nullptr;
    void* p = best->p;
    // The tail the request does not need goes back to the system.
    if (best->bytes > bytes) munmap(static_cast<char*>(p) + bytes, best->bytes - bytes);
    cached_ -= best->bytes;
    *best = Block{};
    return p;
  }
  void Give(void* p, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes > kLargeBlockCacheBytes) {
      munmap(p, bytes);
      return;
    }
    // Over budget or out of slots: the largest cached blocks go first.
    while (cached_ + bytes > kLargeBlockCacheBytes || FreeSlot() == nullptr) {
      Block* largest = nullptr;
      for (Block& b : blocks_) {
        if (b.p != nullptr && (largest == nullptr || b.bytes > largest->bytes)) largest = &b;
      }
      munmap(largest->p, largest->bytes);
      cached_ -= largest->bytes;
      *largest = Block{};
    }
    madvise(p, bytes, MADV_FREE);
    *FreeSlot() = Block{p, bytes};
    cached_ += bytes;
  }
  size_t Trim() {
    std::lock_guard<std::mutex> lock(mu_);
    size_t was = cached_;
    for (Block& b : blocks_) {
      if (b.p != nullptr) munmap(b.p, b.bytes);
      b = Block{};
    }
    cached_ = 0;
    return was;
  }

 private:
  Block* FreeSlot() {
    for (Block& b : blocks_) {
      if (b.p == nullptr) return &b;
    }
    return nullptr;
  }
  std::mutex mu_;
  std::array<Block, 32> blocks_{};
  size_t cached_ = 0;
};

BlockCache& Cache() {
  static BlockCache* cache = new BlockCache();  // never destroyed: columns may outlive statics
  return *cache;
}

void* Map(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

void* AllocateLargeBlock(size_t bytes) {
  size_t mapped = MappedSize(bytes);
  if (void* p = Cache().Take(mapped)) return p;
  void* p = Map(mapped);
  if (p == nullptr && Cache().Trim() > 0) p = Map(mapped);  // cached blocks may be in the way
  if (p == nullptr) throw std::bad_alloc();
  madvise(p, mapped, MADV_HUGEPAGE);
  return p;
}

void FreeLargeBlock(void* p, size_t bytes) {
  Cache().Give(p, MappedSize(bytes));
}

size_t HeldBytes(size_t used_bytes, size_t capacity_bytes) {
  if (capacity_bytes < kLargeBlockThreshold) return capacity_bytes;
  constexpr size_t kHugePage = size_t{2} << 20;
  return std::min(capacity_bytes, (used_bytes + kHugePage - 1) / kHugePage * kHugePage);
}

void ReleaseUnusedPages(void* data, size_t used_bytes, size_t capacity_bytes) {
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + used_bytes + kPage - 1) / kPage * kPage;
  uintptr_t end = reinterpret_cast<uintptr_t>(data) + capacity_bytes;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

size_t TrimLargeBlockCache() {
  return Cache().Trim();
}

}  // namespace profsh
