// Intel ITT: the static part linked into the application (PyTorch, oneDNN, TBB...) dlopens
// INTEL_LIBITTNOTIFY64 on its first call and, finding __itt_api_init, lets us fill its function
// pointers. Domains, string handles and counters created before we were loaded live in the
// static part's own lists; we read their names and keep our ids in their "reserved to the
// runtime" fields.
#include <string.h>

#include "engine/collector/runtime/itt_abi.h"
#include "engine/collector/runtime/registry.h"
#include "engine/collector/runtime/runtime.h"

namespace profsh::runtime {

namespace {

using itt::Id;

uint32_t Intern(const char* s) {
  return registry().strings().Intern(s ? s : "", s ? strlen(s) : 0);
}

// An ITT value type, unknown or out of range meaning ITT's default (unsigned 64-bit).
uint8_t CounterType(int type) {
  return type > 0 && type <= static_cast<int>(itt::kDouble) ? static_cast<uint8_t>(type)
                                                            : uint8_t{itt::kU64};
}

uint16_t DomainId(const IttDomainAbi* d) {
  if (d == nullptr) return 0;
  int known = __atomic_load_n(&d->extra1, __ATOMIC_RELAXED);
  if (known > 0) return static_cast<uint16_t>(known - 1);
  // A domain the static part made before we were loaded.
  uint16_t id = registry().Domain(Intern(d->nameA), stream::kSourceItt);
  __atomic_store_n(&const_cast<IttDomainAbi*>(d)->extra1, id + 1, __ATOMIC_RELAXED);
  return id;
}

uint32_t StringId(const IttStringHandleAbi* h) {
  if (h == nullptr) return Intern("");
  int known = __atomic_load_n(&h->extra1, __ATOMIC_RELAXED);
  if (known > 0) return static_cast<uint32_t>(known - 1);
  // A handle the static part made before we were loaded: its id, with the tags event names carry.
  const char* text = h->strA ? h->strA : "";
  uint32_t id = registry().strings().InternTagged(text, strlen(text));
  __atomic_store_n(&const_cast<IttStringHandleAbi*>(h)->extra1, static_cast<int>(id + 1),
                   __ATOMIC_RELAXED);
  return id;
}

uint32_t CounterId(IttCounterAbi* c) {
  if (c == nullptr) return UINT32_MAX;
  int known = __atomic_load_n(&c->extra1, __ATOMIC_RELAXED);
  if (known > 0) return static_cast<uint32_t>(known - 1);
  uint16_t domain = c->domainA ? registry().Domain(Intern(c->domainA), stream::kSourceItt) : 0;
  uint32_t id = registry().Counter(Intern(c->nameA), domain, CounterType(c->type));
  if (id != UINT32_MAX) __atomic_store_n(&c->extra1, static_cast<int>(id + 1), __ATOMIC_RELAXED);
  return id;
}

uint64_t IdBits(const Id& id) {
  return id.d1 ^ (id.d2 * 0x9e3779b97f4a7c15ull) ^ (id.d3 * 0xc2b2ae3d27d4eb4full);
}
bool IsNull(const Id& id) {
  return id.d1 == 0 && id.d2 == 0 && id.d3 == 0;
}

// --- objects ---
IttDomainAbi* DomainCreate(const char* name) {
  return registry().IttDomain(registry().Domain(Intern(name), stream::kSourceItt));
}

IttStringHandleAbi* StringHandleCreate(const char* name) {
  StringNode* n = registry().strings().Node(name ? name : "", name ? strlen(name) : 0);
  return &n->itt;
}

IttCounterAbi* CounterCreateTyped(const char* name, const char* domain, int type) {
  uint16_t d = domain ? registry().Domain(Intern(domain), stream::kSourceItt) : 0;
  uint32_t id = registry().Counter(Intern(name), d, CounterType(type));
  return id == UINT32_MAX ? nullptr : &registry().counter(id).itt;
}
IttCounterAbi* CounterCreate(const char* name, const char* domain) {
  return CounterCreateTyped(name, domain, itt::kU64);
}
IttCounterAbi* CounterCreateV3(const IttDomainAbi* domain, const char* name, int type) {
  uint32_t id = registry().Counter(Intern(name), DomainId(domain), CounterType(type));
  return id == UINT32_MAX ? nullptr : &registry().counter(id).itt;
}
void CounterDestroy(IttCounterAbi*) {}

// --- tasks ---
__attribute__((noinline)) void TaskBeginSlow(const IttDomainAbi* d, Id id, Id parent,
                                             IttStringHandleAbi* name) {
  if (IsNull(id) && IsNull(parent)) {
    EmitPush(stream::kTaskBegin, 0, DomainId(d), StringId(name), nullptr);
    return;
  }
  uint64_t p = IdBits(parent);
  RecordExt ext{static_cast<uint32_t>(p >> 32), static_cast<uint32_t>(p), IdBits(id)};
  EmitPush(kTaskBeginIds, 0, DomainId(d), StringId(name), &ext);
}

// The common task: no ids, a domain and a name that already carry our ids (extra1 > 0). Its
// fast path reads them inline and makes no call; anything else takes TaskBeginSlow.
void TaskBegin(const IttDomainAbi* d, Id id, Id parent, IttStringHandleAbi* name) {
  ThreadSlot* s = t_slot;
  const int domain = d ? __atomic_load_n(&d->extra1, __ATOMIC_RELAXED) : 1;
  const int known = name ? __atomic_load_n(&name->extra1, __ATOMIC_RELAXED) : 0;
  if (__builtin_expect(s == nullptr || domain <= 0 || known <= 0 ||
                           (id.d1 | id.d2 | id.d3 | parent.d1 | parent.d2 | parent.d3) != 0,
                       0)) {
    TaskBeginSlow(d, id, parent, name);
    return;
  }
  EmitPushOn(s, stream::kTaskBegin, 0, static_cast<uint16_t>(domain - 1),
             static_cast<uint32_t>(known - 1), nullptr);
}

void TaskBeginFn(const IttDomainAbi* d, Id, Id, void* fn) {
  RecordExt ext{0, 0, reinterpret_cast<uint64_t>(fn)};
  EmitPush(kTaskBeginFn, 0, DomainId(d), 0, &ext);
}

__attribute__((noinline)) void TaskEndSlow(const IttDomainAbi* d) {
  EmitPop(stream::kTaskEnd, DomainId(d));
}

void TaskEnd(const IttDomainAbi* d) {
  const int domain = d ? __atomic_load_n(&d->extra1, __ATOMIC_RELAXED) : 1;
  if (__builtin_expect(domain <= 0, 0)) {
    TaskEndSlow(d);
    return;
  }
  EmitPop(stream::kTaskEnd, static_cast<uint16_t>(domain - 1));
}

// --- frames, markers ---
void FrameBegin(const IttDomainAbi* d, Id* id) {
  RecordExt ext{0, 0, id ? IdBits(*id) : 0};
  EmitSimple(stream::kFrameBegin, 0, DomainId(d), 0, &ext);
}
void FrameEnd(const IttDomainAbi* d, Id* id) {
  RecordExt ext{0, 0, id ? IdBits(*id) : 0};
  EmitSimple(stream::kFrameEnd, 0, DomainId(d), 0, &ext);
}
void Marker(const IttDomainAbi* d, Id, IttStringHandleAbi* name, int) {
  EmitSimple(stream::kMark, 0, DomainId(d), StringId(name), nullptr);
}

// --- threads ---
void ThreadSetName(const char* name) {
  if (ThreadSlot* s = CurrentSlot()) s->name.store(Intern(name), std::memory_order_release);
}

// --- counters ---
void EmitCounter(uint32_t id, uint64_t bits) {
  if (id == UINT32_MAX) return;
  RecordExt ext{0, 0, bits};
  EmitSimple(stream::kCounterSet, 0, 0, id, &ext);
}

void CounterSetValue(IttCounterAbi* c, void* value) {
  uint32_t id = CounterId(c);
  if (id == UINT32_MAX || value == nullptr) return;
  CounterInfo& info = registry().counter(id);
  int64_t i = 0;
  double f = 0;
  bool floating = false;
  switch (info.type) {
    case itt::kS64:
      i = *static_cast<int64_t*>(value);
      break;
    case itt::kU32:
      i = *static_cast<uint32_t*>(value);
      break;
    case itt::kS32:
      i = *static_cast<int32_t*>(value);
      break;
    case itt::kU16:
      i = *static_cast<uint16_t*>(value);
      break;
    case itt::kS16:
      i = *static_cast<int16_t*>(value);
      break;
    case itt::kFloat:
      f = *static_cast<float*>(value);
      floating = true;
      break;
    case itt::kDouble:
      f = *static_cast<double*>(value);
      floating = true;
      break;
    default:
      i = static_cast<int64_t>(*static_cast<uint64_t*>(value));
      break;
  }
  uint64_t bits;
  if (floating) {
    memcpy(&bits, &f, 8);
    int64_t stored;
    memcpy(&stored, &f, 8);
    info.value.store(stored, std::memory_order_relaxed);
  } else {
    info.value.store(i, std::memory_order_relaxed);
    // Unsigned 64-bit values go as they are; the others zigzag-coded.
    bits = info.type == itt::kU64 ? static_cast<uint64_t>(i) : stream::ZigZag(i);
  }
  EmitCounter(id, bits);
}

void CounterAdd(IttCounterAbi* c, int64_t delta) {
  uint32_t id = CounterId(c);
  if (id == UINT32_MAX) return;
  CounterInfo& info = registry().counter(id);
  if (info.type == itt::kFloat || info.type == itt::kDouble) {
    // Floating counters keep their value as double bits.
    int64_t old = info.value.load(std::memory_order_relaxed), next;
    do {
      double d;
      memcpy(&d, &old, 8);
      d += static_cast<double>(delta);
      memcpy(&next, &d, 8);
    } while (!info.value.compare_exchange_weak(old, next, std::memory_order_relaxed));
    EmitCounter(id, static_cast<uint64_t>(next));
    return;
  }
  int64_t now = info.value.fetch_add(delta, std::memory_order_relaxed) + delta;
  EmitCounter(id, info.type == itt::kU64 ? static_cast<uint64_t>(now) : stream::ZigZag(now));
}
void CounterInc(IttCounterAbi* c) {
  CounterAdd(c, 1);
}
void CounterIncDelta(IttCounterAbi* c, unsigned long long v) {
  CounterAdd(c, static_cast<int64_t>(v));
}
void CounterDec(IttCounterAbi* c) {
  CounterAdd(c, -1);
}
void CounterDecDelta(IttCounterAbi* c, unsigned long long v) {
  CounterAdd(c, -static_cast<int64_t>(v));
}

// --- collection control: paused time records nothing (pops of ranges opened before still
// close them) ---
void Pause() {
  if (g.off.load(std::memory_order_relaxed) & kOffPaused) return;
  EmitSimple(stream::kPause, 0, 0, 0, nullptr);
  g.off.fetch_or(kOffPaused, std::memory_order_relaxed);
}
void Resume() {
  if (!(g.off.load(std::memory_order_relaxed) & kOffPaused)) return;
  g.off.fetch_and(static_cast<uint8_t>(~kOffPaused), std::memory_order_relaxed);
  EmitSimple(stream::kResume, 0, 0, 0, nullptr);
}
void PauseScoped(int) {
  Pause();
}
void ResumeScoped(int) {
  Resume();
}
void Detach() {
  Pause();
}

struct Provided {
  const char* name;
  void* function;
};

const Provided kProvided[] = {
    {"__itt_domain_create", reinterpret_cast<void*>(DomainCreate)},
    {"__itt_string_handle_create", reinterpret_cast<void*>(StringHandleCreate)},
    {"__itt_task_begin", reinterpret_cast<void*>(TaskBegin)},
    {"__itt_task_begin_fn", reinterpret_cast<void*>(TaskBeginFn)},
    {"__itt_task_end", reinterpret_cast<void*>(TaskEnd)},
    {"__itt_frame_begin_v3", reinterpret_cast<void*>(FrameBegin)},
    {"__itt_frame_end_v3", reinterpret_cast<void*>(FrameEnd)},
    {"__itt_marker", reinterpret_cast<void*>(Marker)},
    {"__itt_thread_set_name", reinterpret_cast<void*>(ThreadSetName)},
    {"__itt_counter_create", reinterpret_cast<void*>(CounterCreate)},
    {"__itt_counter_create_typed", reinterpret_cast<void*>(CounterCreateTyped)},
    {"__itt_counter_create_v3", reinterpret_cast<void*>(CounterCreateV3)},
    {"__itt_counter_destroy", reinterpret_cast<void*>(CounterDestroy)},
    {"__itt_counter_set_value", reinterpret_cast<void*>(CounterSetValue)},
    {"__itt_counter_set_value_v3", reinterpret_cast<void*>(CounterSetValue)},
    {"__itt_counter_inc", reinterpret_cast<void*>(CounterInc)},
    {"__itt_counter_inc_delta", reinterpret_cast<void*>(CounterIncDelta)},
    {"__itt_counter_dec", reinterpret_cast<void*>(CounterDec)},
    {"__itt_counter_dec_delta", reinterpret_cast<void*>(CounterDecDelta)},
    {"__itt_pause", reinterpret_cast<void*>(Pause)},
    {"__itt_resume", reinterpret_cast<void*>(Resume)},
    {"__itt_pause_scoped", reinterpret_cast<void*>(PauseScoped)},
    {"__itt_resume_scoped", reinterpret_cast<void*>(ResumeScoped)},
    {"__itt_detach", reinterpret_cast<void*>(Detach)},
};

void* ProvidedFunction(const char* name) {
  for (const Provided& p : kProvided) {
    if (strcmp(p.name, name) == 0) return p.function;
  }
  return nullptr;
}

}  // namespace

}  // namespace profsh::runtime

// Called by every static part (one per shared object that links ittnotify) when it loads us.
extern "C" __attribute__((visibility("default"))) void __itt_api_init(
    profsh::runtime::itt::Global* global, int /*init_groups*/) {
  using namespace profsh::runtime;
  if (global == nullptr || global->api_list_ptr == nullptr) return;
  const bool on = g.active && g.itt;
  for (itt::ApiInfo* api = global->api_list_ptr; api->name != nullptr; ++api) {
    void* mine = on ? ProvidedFunction(api->name) : nullptr;
    *api->func_ptr = mine ? mine : api->null_func;
  }
  if (!on) return;
  // Objects the application received before we were loaded: give them our ids now, so that
  // the per-event path finds them ready.
  for (IttDomainAbi* d = global->domain_list; d != nullptr; d = d->next) DomainId(d);
  for (IttStringHandleAbi* h = global->string_list; h != nullptr; h = h->next) StringId(h);
  // The counter list is not walked: older static parts end their global structure before it.
  // Counters made before we loaded are adopted when first used (CounterId).
}
