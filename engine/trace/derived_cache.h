// Values derived from a Trace by the layers above it (the analyses' event model), built once when
// first asked for and kept beside the trace. The trace layer cannot name their types, so a value
// is held type-erased under the address of a tag its owner declares. A value is tied to the
// generation of the trace's events it was built from: once the events change (appended, moved in
// time, compacted), the next Get builds it anew.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace profsh {

class DerivedCache {
 public:
  DerivedCache() = default;
  DerivedCache(const DerivedCache&) = delete;
  DerivedCache& operator=(const DerivedCache&) = delete;

  // The value under `tag` for this generation, built by `build` (which returns a
  // std::shared_ptr<const T>) when absent or stale. Safe to call from several threads: one builds
  // while the others wait for it; a build may itself ask for another tag's value.
  template <typename T, typename Build>
  std::shared_ptr<const T> Get(const void* tag, uint64_t generation, Build&& build) {
    std::shared_ptr<Slot> slot = SlotFor(tag, generation);
    std::call_once(slot->once, [&] { slot->value = std::shared_ptr<const void>(build()); });
    return std::static_pointer_cast<const T>(slot->value);
  }
  // Drops every value (callers that still hold one keep it alive).
  void Clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    slots_.clear();
  }
  // How many times a value was (re)built since the cache was made: what tests check reuse by.
  uint64_t builds() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return builds_;
  }

 private:
  struct Slot {
    uint64_t generation = 0;
    std::once_flag once;
    std::shared_ptr<const void> value;
  };
  std::shared_ptr<Slot> SlotFor(const void* tag, uint64_t generation) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<Slot>& slot = slots_[tag];
    if (!slot || slot->generation != generation) {
      slot = std::make_shared<Slot>();
      slot->generation = generation;
      ++builds_;
    }
    return slot;
  }

  mutable std::mutex mutex_;
  std::unordered_map<const void*, std::shared_ptr<Slot>> slots_;
  uint64_t builds_ = 0;
};

}  // namespace profsh
