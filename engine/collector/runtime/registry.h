// Named things created rarely (domains, categories, counters, thread names): created under a
// short spin lock, announced to the drain thread through a bounded lock-free queue.
#pragma once

#include <atomic>
#include <cstdint>

#include "engine/collector/runtime/string_table.h"

namespace profsh::runtime {

// ITT's __itt_domain layout: the application reads `flags` before every call.
struct IttDomainAbi {
  volatile int flags;
  const char* nameA;
  void* nameW;
  int extra1;  // our domain id + 1
  void* extra2;
  IttDomainAbi* next;
};

// ITT's __itt_counter_info_t layout: counters the static part made before we were loaded look
// like this, and ours do too, so that one code path reads both.
struct IttCounterAbi {
  const char* nameA;
  void* nameW;
  const char* domainA;
  void* domainW;
  int type;
  long index;
  int extra1;  // our counter id + 1
  void* extra2;
  IttCounterAbi* next;
};

inline constexpr uint32_t kMaxDomains = 4096;
inline constexpr uint32_t kMaxCounters = 4096;

struct CounterInfo {
  uint32_t name = 0;
  uint16_t domain = 0;
  uint8_t type = 0;
  std::atomic<int64_t> value{0};  // for inc/dec
  IttCounterAbi itt{};
};

enum MetaType : uint32_t {
  kMetaDomain = 1,        // a: domain id, b: name id, c: source
  kMetaCategory = 2,      // a: domain id, b: category, c: name id
  kMetaCounter = 3,       // a: counter id, b: domain id, c: name id | type << 32
  kMetaOsThreadName = 4,  // a: tid, b: name id
};

struct MetaEntry {
  std::atomic<uint32_t> ready;
  uint32_t type;
  uint64_t a, b, c;
};

class Registry {
 public:
  bool Init(StringTable* strings);

  StringTable& strings() { return *strings_; }

  // The domain of that name and source, created on first use. 0 is the default domain.
  uint16_t Domain(uint32_t name, uint8_t source);
  IttDomainAbi* IttDomain(uint16_t id) { return &itt_domains_[id]; }

  uint32_t Counter(uint32_t name, uint16_t domain, uint8_t type);
  CounterInfo& counter(uint32_t id) { return counters_[id]; }

  void NameCategory(uint16_t domain, uint32_t category, uint32_t name);
  void NameOsThread(int64_t tid, uint32_t name);

  // The drain thread: entries in order, from `next` on, until one is not ready yet.
  const MetaEntry* Entry(uint64_t index) const;
  uint64_t dropped_metadata() const { return dropped_meta_.load(std::memory_order_relaxed); }
  void ResetDroppedMetadata() { dropped_meta_.store(0, std::memory_order_relaxed); }

  // Fork safety: the lock is held across fork() so that the child never inherits it taken.
  void LockForFork() { Lock(); }
  void UnlockAfterFork() { Unlock(); }

 private:
  void Lock();
  void Unlock() { lock_.clear(std::memory_order_release); }
  void Publish(uint32_t type, uint64_t a, uint64_t b, uint64_t c);

  StringTable* strings_ = nullptr;
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  IttDomainAbi itt_domains_[kMaxDomains] = {};
  uint32_t domain_names_[kMaxDomains] = {};
  uint8_t domain_sources_[kMaxDomains] = {};
  uint32_t domain_count_ = 1;
  CounterInfo* counters_ = nullptr;
  uint32_t counter_count_ = 0;
  MetaEntry* meta_ = nullptr;
  uint64_t meta_capacity_ = 0;
  std::atomic<uint64_t> meta_next_{0};
  std::atomic<uint64_t> dropped_meta_{0};
};

Registry& registry();

}  // namespace profsh::runtime
