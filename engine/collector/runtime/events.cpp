// The per-event path shared by every source, and the claiming of thread slots.
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "engine/collector/runtime/raw_map.h"
#include "engine/collector/runtime/runtime.h"
#include "engine/collector/runtime/steps.h"

namespace profsh::runtime {

Globals g;
__thread ThreadSlot* t_slot __attribute__((tls_model("initial-exec"))) = nullptr;
__thread bool t_is_drain_thread __attribute__((tls_model("initial-exec"))) = false;

bool MapRing(ThreadSlot& s);

namespace {

pthread_key_t g_slot_key;
bool g_slot_key_ready = false;
__thread bool t_no_slot __attribute__((tls_model("initial-exec"))) = false;

void ReleaseSlotAtThreadExit(void* value) {
  auto* s = static_cast<ThreadSlot*>(value);
  if (s == nullptr) return;
  // Tell the reader the thread ended (ranges still open end here), then hand the slot to the
  // drain thread, which frees it once the ring is empty.
  if (Record* r = Reserve(s, 1, 0)) {
    *r = Record{Now(), stream::kThreadEnd, 0, 0, 0};
    Commit(s, 1);
  } else {
    BumpRelaxed(s->dropped_events);
  }
  t_slot = nullptr;
  t_no_slot = true;  // destructors of other keys may still emit: do not claim again
  s->state.store(kSlotExiting, std::memory_order_release);
}

}  // namespace

void InitSlotKey() {
  g_slot_key_ready = pthread_key_create(&g_slot_key, ReleaseSlotAtThreadExit) == 0;
}

ThreadSlot* ClaimSlot() {
  if (!g.active || g.slots == nullptr) return nullptr;
  if (t_no_slot) {
    // Every event of a thread without a slot (the table was full, or the thread is exiting)
    // is counted.
    g.events_without_slot.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  for (uint32_t i = 0; i < g.slot_count; ++i) {
    ThreadSlot& s = g.slots[i];
    uint32_t expected = kSlotFree;
    if (s.state.load(std::memory_order_relaxed) != kSlotFree) continue;
    if (!s.state.compare_exchange_strong(expected, kSlotClaiming, std::memory_order_acq_rel))
      continue;
    if (s.ring == nullptr && !MapRing(s)) {
      s.state.store(kSlotFree, std::memory_order_release);
      break;
    }
    // The drain thread reset the counters when it freed the slot; head == tail here.
    s.limit = 0;  // the first event reads the tail
    s.depth = 0;
    for (uint8_t& m : s.level_marks) m = 0;
    for (MessageCacheEntry& e : s.cache) e = MessageCacheEntry{};
    s.name.store(0, std::memory_order_relaxed);
    s.tid.store(static_cast<int64_t>(syscall(SYS_gettid)), std::memory_order_relaxed);
    s.pthread_low.store(static_cast<uint32_t>(pthread_self()), std::memory_order_relaxed);
    s.state.store(kSlotActive, std::memory_order_release);  // now the drain thread may read it
    t_slot = &s;
    if (g_slot_key_ready) pthread_setspecific(g_slot_key, &s);
    return &s;
  }
  g.events_without_slot.fetch_add(1, std::memory_order_relaxed);
  t_no_slot = true;
  return nullptr;
}

bool MapRing(ThreadSlot& s) {
  // A thread's ring is mapped when the thread first needs it (address space only until
  // written), so a process reserves nothing for threads it never has.
  const uint64_t bytes = g.ring_records * sizeof(Record);
  if (g.ring_bytes_limit != 0 &&
      g.ring_bytes_mapped.fetch_add(bytes, std::memory_order_relaxed) + bytes >
          g.ring_bytes_limit) {
    g.ring_bytes_mapped.fetch_sub(bytes, std::memory_order_relaxed);
    return false;
  }
  void* p = RawMap(bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  if (p == MAP_FAILED) {
    if (g.ring_bytes_limit != 0) g.ring_bytes_mapped.fetch_sub(bytes, std::memory_order_relaxed);
    return false;
  }
  s.ring = static_cast<Record*>(p);
  s.mask = g.ring_records - 1;
  return true;
}

// One system call per drain round at most, whatever the number of producers. errno is the
// application's.
void RingDrainBell() {
  if (g.drain_bell.load(std::memory_order_relaxed) != 0 ||
      g.drain_bell.exchange(1, std::memory_order_acq_rel) != 0)
    return;
  const int saved = errno;
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g.drain_bell), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
  errno = saved;
}

// The wake mark: a ring this fraction full rings the drain thread's bell.
constexpr uint64_t kWakeFraction = 4;

Record* ReserveSlow(ThreadSlot* s, uint64_t n, uint64_t reserve) {
  const uint64_t head = s->head.load(std::memory_order_relaxed);
  const uint64_t tail = s->tail.load(std::memory_order_acquire);
  const uint64_t capacity = s->mask + 1;
  const uint64_t used = head + n - tail;
  // A ring past its wake mark would fill before the drain thread's next timed round at full
  // speed: wake it now, and look again a wake mark later (it may be asleep again by then).
  // Between two looks the events take the fast path; a push refused for want of room is
  // counted by the caller.
  if (used >= capacity / kWakeFraction) {
    RingDrainBell();
    s->limit = std::min(tail + capacity, head + n + capacity / kWakeFraction);
  } else {
    s->limit = tail + capacity / kWakeFraction + kPopReserve;
  }
  if (used + reserve > capacity) return nullptr;
  return &s->ring[head & s->mask];
}

Record* ReserveLevel(ThreadSlot* s, uint32_t level, uint64_t n) {
  // Levels past kMaxLevels are not recorded (their pops could not be told apart, nor be sure
  // to fit in the pop reserve); they are counted as dropped.
  Record* r = Recording() && level < kMaxLevels ? Reserve(s, n, kPopReserve) : nullptr;
  if (r != nullptr) return r;
  // Off, deep, or the buffer is full: the level is skipped, and so will its pop be.
  if (Recording()) {
    BumpRelaxed(s->dropped_ranges);
  } else if (g.off.load(std::memory_order_relaxed) & kOffClosed) {
    g.events_after_close.fetch_add(1, std::memory_order_relaxed);
  }
  SetLevelSkipped(s, level, true);
  return nullptr;
}

int EmitPushSlow(ThreadSlot* s, uint8_t kind, uint8_t flags, uint16_t domain, uint32_t name,
                 const RecordExt* ext) {
  if (s == nullptr && (s = CurrentSlot()) == nullptr) return -1;
  const uint32_t level = s->depth++;
  if (name & kTagMask) {
    name = OnTaggedName(s, name, level);
  } else if (g.off.load(std::memory_order_relaxed) & kOffBeforeFirstStep) {
    CountNameBeforeFirstStep(name);
  }
  const uint64_t n = ext ? 2 : 1;
  Record* r = ReserveLevel(s, level, n);
  if (r == nullptr) return static_cast<int>(level);
  *r = Record{Now(), kind, static_cast<uint8_t>(flags | (ext ? kHasExt : 0)), domain, name};
  if (ext) WriteExt(s, 1, *ext);
  Commit(s, n);
  return static_cast<int>(level);
}

int SkipCountingName(ThreadSlot* s, uint32_t level, uint32_t name) {
  CountNameBeforeFirstStep(name);
  s->depth = level + 1;
  s->level_marks[level] = kLevelSkipped;
  return static_cast<int>(level);
}

int EmitPopSlow(ThreadSlot* s, uint8_t kind, uint16_t domain) {
  if (s == nullptr && (s = CurrentSlot()) == nullptr) return -1;
  if (s->depth == 0) return EmitUnmatchedPop(s, kind, domain);
  const uint32_t level = --s->depth;
  if (level >= kMaxLevels || LevelSkipped(s, level)) {
    SetLevelSkipped(s, level, false);
  } else if (Record* r = Reserve(s, 1, 0)) {
    *r = Record{Now(), kind, 0, domain, 0};
    Commit(s, 1);
  } else {
    BumpRelaxed(s->dropped_events);
  }
  if (LevelMarked(s, level, kLevelCapture)) OnCaptureEnd(s, level);
  return static_cast<int>(level);
}

int EmitUnmatchedPop(ThreadSlot* s, uint8_t kind, uint16_t domain) {
  BumpRelaxed(s->unmatched_pops);
  // Not from the pop reserve: that is for the pops of recorded pushes.
  if (Record* r = Reserve(s, 1, kPopReserve)) {
    *r = Record{Now(), kind, 0, domain, 0};
    Commit(s, 1);
  }
  return -1;
}

uint64_t EmitRangeStart(uint8_t flags, uint16_t domain, uint32_t name, const RecordExt* ext) {
  ThreadSlot* s = CurrentSlot();
  if (s == nullptr) return 0;
  if (name & kTagMask) {
    name = OnTaggedName(s, name, -1);
  } else if (g.off.load(std::memory_order_relaxed) & kOffBeforeFirstStep) {
    CountNameBeforeFirstStep(name);
  }
  // Unique in the process without shared counters: the slot in the high bits. Bit 63 marks a
  // range that was not recorded (paused or dropped), so that its end is skipped too.
  const uint64_t id =
      (uint64_t{s->index + 1} << 40) | (++s->range_counter & ((uint64_t{1} << 40) - 1));
  if (!Recording()) return id | (uint64_t{1} << 63);
  // [start][category, color, id][payload]: the payload, when there is one, needs a third slot.
  const bool payload = (flags & stream::kAttrPayload) && ext;
  const uint64_t n = payload ? 3 : 2;
  Record* r = Reserve(s, n, kPopReserve);
  if (r == nullptr) {
    BumpRelaxed(s->dropped_ranges);
    return id | (uint64_t{1} << 63);
  }
  const uint64_t head = s->head.load(std::memory_order_relaxed);
  *r = Record{Now(), stream::kRangeStart, static_cast<uint8_t>(flags | kHasExt), domain, name};
  *reinterpret_cast<RecordExt*>(&s->ring[(head + 1) & s->mask]) =
      RecordExt{ext ? ext->category : 0, ext ? ext->color : 0, id};
  if (payload)
    *reinterpret_cast<RecordExt*>(&s->ring[(head + 2) & s->mask]) = RecordExt{0, 0, ext->value};
  Commit(s, n);
  return id;
}

void EmitRangeEnd(uint64_t id) {
  if (id == 0 || (id >> 63)) return;  // its start was not recorded
  ThreadSlot* s = CurrentSlot();
  if (s == nullptr) return;
  Record* r = Reserve(s, 2, kPopReserve);
  if (r == nullptr) {
    BumpRelaxed(s->dropped_events);
    return;
  }
  *r = Record{Now(), stream::kRangeEnd, kHasExt, 0, 0};
  *reinterpret_cast<RecordExt*>(&s->ring[(s->head.load(std::memory_order_relaxed) + 1) & s->mask]) =
      RecordExt{0, 0, id};
  Commit(s, 2);
}

}  // namespace profsh::runtime
