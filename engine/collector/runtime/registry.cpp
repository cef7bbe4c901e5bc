#include "engine/collector/runtime/registry.h"

#include <sched.h>
#include <sys/mman.h>

#include <new>

#include "engine/collector/runtime/raw_map.h"
#include "engine/collector/runtime/runtime.h"

namespace profsh::runtime {

namespace {

constexpr uint64_t kMetaCapacity = 1 << 16;

}  // namespace

Registry& registry() {
  static Registry instance;
  return instance;
}

bool Registry::Init(StringTable* strings) {
  strings_ = strings;
  void* c = RawMap(sizeof(CounterInfo) * kMaxCounters, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  void* m = RawMap(sizeof(MetaEntry) * kMetaCapacity, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  if (c == MAP_FAILED || m == MAP_FAILED) return false;
  counters_ = static_cast<CounterInfo*>(c);
  for (uint32_t i = 0; i < kMaxCounters; ++i) new (&counters_[i]) CounterInfo();
  meta_ = static_cast<MetaEntry*>(m);
  meta_capacity_ = kMetaCapacity;
  // The default domain: ITT never sees it, NVTX's non-domain calls use it.
  itt_domains_[0].flags = 1;
  return true;
}

void Registry::Lock() {
  while (lock_.test_and_set(std::memory_order_acquire)) sched_yield();
}

// Caller holds the lock, which fork holds too (BeforeFork): an entry claimed but not yet ready
// when a thread forked would stop the child's drain at it, and the child's later domains,
// counters and names would never reach its stream.
void Registry::Publish(uint32_t type, uint64_t a, uint64_t b, uint64_t c) {
  uint64_t i = meta_next_.fetch_add(1, std::memory_order_relaxed);
  if (i >= meta_capacity_) {
    dropped_meta_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  MetaEntry& e = meta_[i];
  e.type = type;
  e.a = a;
  e.b = b;
  e.c = c;
  e.ready.store(1, std::memory_order_release);
}

const MetaEntry* Registry::Entry(uint64_t index) const {
  if (index >= meta_capacity_ || index >= meta_next_.load(std::memory_order_acquire))
    return nullptr;
  const MetaEntry& e = meta_[index];
  return e.ready.load(std::memory_order_acquire) ? &e : nullptr;
}

uint16_t Registry::Domain(uint32_t name, uint8_t source) {
  name &= kIdMask;
  Lock();
  for (uint32_t d = 1; d < domain_count_; ++d) {
    if (domain_names_[d] == name && domain_sources_[d] == source) {
      Unlock();
      return static_cast<uint16_t>(d);
    }
  }
  if (domain_count_ >= kMaxDomains) {
    Unlock();
    return 0;  // reported as the default domain rather than lost
  }
  uint32_t d = domain_count_++;
  domain_names_[d] = name;
  domain_sources_[d] = source;
  IttDomainAbi& itt = itt_domains_[d];
  itt.nameA = strings_->ById(name)->text;
  itt.extra1 = static_cast<int>(d + 1);
  itt.flags = 1;
  Publish(kMetaDomain, d, name, source);
  Unlock();
  return static_cast<uint16_t>(d);
}

uint32_t Registry::Counter(uint32_t name, uint16_t domain, uint8_t type) {
  name &= kIdMask;
  Lock();
  for (uint32_t i = 0; i < counter_count_; ++i) {
    const CounterInfo& c = counters_[i];
    if (c.name == name && c.domain == domain && c.type == type) {
      Unlock();
      return i;
    }
  }
  if (counter_count_ >= kMaxCounters) {
    Unlock();
    return UINT32_MAX;
  }
  uint32_t id = counter_count_++;
  CounterInfo& c = counters_[id];
  c.name = name;
  c.domain = domain;
  c.type = type;
  c.itt.nameA = strings_->ById(name)->text;
  c.itt.domainA = domain ? strings_->ById(domain_names_[domain])->text : nullptr;
  c.itt.type = type;
  c.itt.extra1 = static_cast<int>(id + 1);
  Publish(kMetaCounter, id, domain, name | (uint64_t{type} << 32));
  Unlock();
  return id;
}

void Registry::NameCategory(uint16_t domain, uint32_t category, uint32_t name) {
  Lock();
  Publish(kMetaCategory, domain, category, name & kIdMask);
  Unlock();
}

void Registry::NameOsThread(int64_t tid, uint32_t name) {
  Lock();
  Publish(kMetaOsThreadName, static_cast<uint64_t>(tid), name & kIdMask, 0);
  Unlock();
}

}  // namespace profsh::runtime
