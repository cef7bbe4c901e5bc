// Which op or runtime call an id names. Device work names its launcher by ids (an op's External
// id, a runtime call's correlation); millions of kernels look theirs up, and the ops offering
// ids are read in parallel parts, so the index is built for exactly the ids some device work
// wants and keeps the first candidate as torch's dicts do, whatever order the parts run in.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "engine/util/hash.h"
#include "engine/util/large_vector.h"

namespace profsh {

// The ids (External ids, correlations) that device work refers to, each mapped to the first
// candidate that carries it. Ids are counters in practice, so a dense array usually does; a hash
// table takes over when they are spread out.
class IdIndex {
 public:
  // `for_each_wanted(f)` calls f(id) for every wanted id; it is called twice.
  template <typename ForEachWanted>
  explicit IdIndex(ForEachWanted for_each_wanted) {
    size_t count = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for_each_wanted([&](int64_t id) {
      ++count;
      lo = std::min(lo, id);
      hi = std::max(hi, id);
    });
    if (count == 0) return;
    // hi - lo, not the count of values in [lo, hi], which wraps to 0 for the whole int64 range.
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    if (span < count * 8 + 4096) {
      dense_ = true;
      min_ = lo;
      dense_values_.assign(span + 1, kNotWanted);
      for_each_wanted([&](int64_t id) { dense_values_[static_cast<uint64_t>(id - lo)] = kUnset; });
      return;
    }
    size_t n = 16;
    while (n < count * 2) n <<= 1;
    keys_.assign(n, kEmpty);
    values_.assign(n, kUnset);
    for_each_wanted([&](int64_t id) { keys_[Slot(id)] = id; });
  }
  // Keeps the earliest candidate offered for a wanted id, as the reference's dicts keep the
  // first; the parts of a parallel loop may offer at the same time.
  void Offer(int64_t id, uint32_t candidate) {
    int32_t* v = Value(id);
    if (v == nullptr) return;
    std::atomic_ref<int32_t> slot(*v);
    const int32_t c = static_cast<int32_t>(candidate);
    int32_t seen = slot.load(std::memory_order_relaxed);
    while ((seen == kUnset || seen > c) &&
           !slot.compare_exchange_weak(seen, c, std::memory_order_relaxed)) {
    }
  }
  int32_t Find(int64_t id) const {
    const int32_t* v = const_cast<IdIndex*>(this)->Value(id);
    return v == nullptr || *v < 0 ? -1 : *v;
  }

 private:
  static constexpr int32_t kUnset = -1, kNotWanted = -2;
  static constexpr int64_t kEmpty = INT64_MIN;
  int32_t* Value(int64_t id) {
    if (dense_) {
      uint64_t off = static_cast<uint64_t>(id) - static_cast<uint64_t>(min_);
      if (off >= dense_values_.size()) return nullptr;
      // Offers may run in parallel; kNotWanted is never written after construction.
      int32_t* v = &dense_values_[off];
      return std::atomic_ref<int32_t>(*v).load(std::memory_order_relaxed) == kNotWanted ? nullptr
                                                                                        : v;
    }
    if (keys_.empty()) return nullptr;
    size_t pos = Slot(id);
    return keys_[pos] == id ? &values_[pos] : nullptr;
  }
  size_t Slot(int64_t key) const {
    size_t mask = keys_.size() - 1;
    size_t pos = HashInt(static_cast<uint64_t>(key)) & mask;
    while (keys_[pos] != kEmpty && keys_[pos] != key) pos = (pos + 1) & mask;
    return pos;
  }
  bool dense_ = false;
  int64_t min_ = 0;
  LargeVector<int32_t> dense_values_;
  LargeVector<int64_t> keys_;
  LargeVector<int32_t> values_;
};

}  // namespace profsh
