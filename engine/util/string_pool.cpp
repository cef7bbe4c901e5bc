#include "engine/util/string_pool.h"

#include <algorithm>
#include <cstring>

#include "engine/util/hash.h"

namespace profsh {

namespace {
// Blocks grow from 4 KB to 1 MB: a small trace (and a fuzzer's every input) does not pay for
// mapping and faulting in a whole megabyte, a large one still gets few big blocks.
constexpr size_t kFirstBlockSize = 4 << 10;
constexpr size_t kBlockSize = 1 << 20;
constexpr size_t kLargeString = kBlockSize / 4;
}  // namespace

StringPool::StringPool() {
  slots_.assign(1024, 0);
  mask_ = slots_.size() - 1;
  InternHashed(std::string_view(), HashBytes(std::string_view()));
}

const char* StringPool::Store(std::string_view s) {
  total_bytes_ += s.size();
  if (s.size() >= kLargeString) {
    auto block = std::make_unique<char[]>(s.size() + 1);
    std::memcpy(block.get(), s.data(), s.size());
    block[s.size()] = '\0';
    const char* p = block.get();
    // Keep the current small-string block at the back so it stays the one being filled.
    blocks_.insert(blocks_.empty() ? blocks_.end() : blocks_.end() - 1, std::move(block));
    block_bytes_ += s.size() + 1;
    return p;
  }
  if (block_used_ + s.size() + 1 > block_capacity_) {
    size_t size =
        block_capacity_ == 0 ? kFirstBlockSize : std::min(kBlockSize, block_capacity_ * 2);
    while (size < s.size() + 1) size *= 2;  // s is below kLargeString, so size stays <= kBlockSize
    blocks_.push_back(std::make_unique<char[]>(size));
    block_used_ = 0;
    block_capacity_ = size;
    block_bytes_ += size;
  }
  char* p = blocks_.back().get() + block_used_;
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  block_used_ += s.size() + 1;
  return p;
}

void StringPool::Grow() {
  std::vector<uint32_t> bigger(slots_.size() * 2, 0);
  uint64_t mask = bigger.size() - 1;
  for (uint32_t slot : slots_) {
    if (slot == 0) continue;
    uint64_t pos = entries_[slot - 1].hash32 & mask;
    // hash32 holds only 32 bits; tables beyond 2^32 slots are out of reach anyway.
    while (bigger[pos] != 0) pos = (pos + 1) & mask;
    bigger[pos] = slot;
  }
  slots_.swap(bigger);
  mask_ = mask;
}

uint32_t StringPool::InternHashed(std::string_view s, uint64_t hash) {
  uint32_t h32 = static_cast<uint32_t>(hash);
  uint64_t pos = h32 & mask_;
  while (true) {
    uint32_t slot = slots_[pos];
    if (slot == 0) break;
    const Entry& e = entries_[slot - 1];
    if (e.hash32 == h32 && e.size == s.size() &&
        (s.empty() || std::memcmp(e.data, s.data(), s.size()) == 0)) {
      return slot - 1;
    }
    pos = (pos + 1) & mask_;
  }
  uint32_t id = static_cast<uint32_t>(entries_.size());
  entries_.push_back(Entry{Store(s), static_cast<uint32_t>(s.size()), h32});
  slots_[pos] = id + 1;
  if (entries_.size() * 10 > slots_.size() * 6) Grow();
  return id;
}

uint32_t StringPool::Intern(std::string_view s) {
  return InternHashed(s, HashBytes(s));
}

std::optional<uint32_t> StringPool::Find(std::string_view s) const {
  uint32_t h32 = static_cast<uint32_t>(HashBytes(s));
  uint64_t pos = h32 & mask_;
  while (true) {
    uint32_t slot = slots_[pos];
    if (slot == 0) return std::nullopt;
    const Entry& e = entries_[slot - 1];
    if (e.hash32 == h32 && e.size == s.size() &&
        (s.empty() || std::memcmp(e.data, s.data(), s.size()) == 0)) {
      return slot - 1;
    }
    pos = (pos + 1) & mask_;
  }
}

size_t StringPool::MemoryBytes() const {
  return block_bytes_ + entries_.capacity() * sizeof(Entry) + slots_.capacity() * sizeof(uint32_t);
}

}  // namespace profsh
