// The injected runtime's core: per-thread event buffers, the clock, and what the sources (NVTX,
// ITT) call on their per-event path. Everything here runs inside someone else's program: no
// locks, no allocation, no system call and no exception on the per-event path; a full buffer
// drops the event and counts it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#include <time.h>

#include "engine/stream/stream_format.h"

namespace profsh::runtime {

// One 16-byte slot of a thread's ring. Events with attributes or ids take a second slot
// (RecordExt) right after the first.
struct Record {
  uint64_t ticks;
  uint8_t kind;     // stream::EventKind, or an internal kind below
  uint8_t flags;    // stream::AttrFlags in bits 0..2, payload type in bits 3..5; kHasExt
  uint16_t domain;  // 0: the default domain
  uint32_t name;    // string id, counter id, or 0
};
static_assert(sizeof(Record) == 16, "ring records are 16 bytes");

struct RecordExt {
  uint32_t category;
  uint32_t color;
  uint64_t value;  // payload bits, range id, task id, counter value, function address
};
static_assert(sizeof(RecordExt) == 16, "ring extensions are 16 bytes");

inline constexpr uint8_t kHasExt = 1 << 6;
// Slots an event takes: its record, an extension, and for a range start with a payload a
// second extension (the first holds the range id).
inline uint64_t RecordsOf(const Record& r) {
  if (r.kind == stream::kOpBegin) return 3;  // [op][shapes, dtypes, seq][stack, fwd tid, flops]
  return 1 + ((r.flags & kHasExt) ? 1 : 0) +
         (r.kind == stream::kRangeStart && (r.flags & stream::kAttrPayload) ? 1 : 0);
}

// Internal kinds, resolved by the drain thread before anything is written.
inline constexpr uint8_t kTaskBeginFn = 32;   // ext.value: the task's function address
inline constexpr uint8_t kTaskBeginIds = 33;  // ext: task id (value) and parent id (category:color)

// Pointer -> string id cache for messages: a hit still compares the text with the interned
// copy, so a reused buffer with new text is never mistaken for the old one. A message of at
// most 15 bytes whose pointer leaves 16 readable bytes in its page (`fast`) is compared as two
// words, the bytes past its NUL shifted out; others byte by byte with the interned copy (found
// by id). 32 bytes an entry: every slot of the table is touched when the runtime starts.
struct alignas(32) MessageCacheEntry {
  const char* pointer;
  uint64_t word[2];  // the text and its NUL, zero-padded
  uint32_t id;       // with its tags
  uint8_t shift[3];  // word 0 << shift[0]; word 1 << shift[1] << shift[2] (64 in two steps)
  bool fast;         // `word` and `shift` decide, and the id carries no tag
};
static_assert(sizeof(MessageCacheEntry) == 32, "two entries a cache line");
inline constexpr size_t kMessageCacheSize = 64;

// kSlotClaiming: a thread is setting the slot up; the drain thread leaves it alone until the
// slot is Active, so it never announces a half-written occupant.
enum SlotState : uint32_t { kSlotFree = 0, kSlotActive = 1, kSlotExiting = 2, kSlotClaiming = 3 };

// A thread's buffer. The owning thread writes `head` (release) and the producer fields; the
// drain thread writes `tail` (release). Three groups of cache lines, so that no line one side
// writes is read by the other per event: a line the drain read while the producer writes it
// costs the producer's next store a trip to the other core (measured: 10-20 ns a pair when the
// drain thread reloaded `ring` from the line holding `head` for every record it encoded).
struct alignas(64) ThreadSlot {
  // --- set when the slot is claimed (or the runtime starts): read by both sides ---
  Record* ring;
  uint64_t mask;  // capacity - 1 (records)
  uint32_t index;
  // --- the owning thread, written on every event; the drain thread reads `head` once a round ---
  alignas(64) std::atomic<uint64_t> head;
  // Reserve's fast path holds while head + records + reserve <= limit: the ring's end as of
  // the last tail read (so the shared line is not read on every event), or before that the
  // wake mark, a quarter ring past that tail, where the producer rings the drain thread.
  uint64_t limit;
  uint32_t depth;  // open push/task levels (all domains)
  // kLevelSkipped, kLevelCapture per level; zero at and above `depth`, so that a push finds
  // its level clear and a pop tests one byte for both.
  uint8_t level_marks[256];
  uint64_t range_counter;  // for RangeStart ids
  std::atomic<uint64_t> dropped_ranges;
  std::atomic<uint64_t> dropped_events;
  std::atomic<uint64_t> unmatched_pops;
  MessageCacheEntry cache[kMessageCacheSize];
  // --- the drain thread and the slot allocator ---
  alignas(64) std::atomic<uint64_t> tail;
  std::atomic<uint32_t> state;
  std::atomic<int64_t> tid;
  // The low 32 bits of pthread_self(): what CUPTI reports as an API record's thread.
  std::atomic<uint32_t> pthread_low;
  std::atomic<uint32_t> name;  // string id of the thread's name, 0 when unnamed
  uint32_t announced_name;     // drain thread: the name last written
  bool announced;              // drain thread: kThread written for this occupant
  uint64_t written_ranges, written_events, written_pops;  // drain thread: last kDrops values
};

static_assert(offsetof(ThreadSlot, head) / 64 != offsetof(ThreadSlot, mask) / 64 &&
                  offsetof(ThreadSlot, tail) / 64 != offsetof(ThreadSlot, head) / 64,
              "what the producer writes per event shares no line with what the drain reads");

enum OffBits : uint8_t {
  kOffPaused = 1 << 0,    // ITT __itt_pause
  kOffSchedule = 1 << 1,  // the schedule says NONE for this step (or on-demand is idle)
  kOffCapture = 1 << 2,   // outside every capture range
  kOffStopped = 1 << 3,   // the profiler was stopped
  kOffClosed = 1 << 4,    // the image's final flush is done: later events are only counted
  // With kOffSchedule, before a step marker first matched: skipped pushes count their names
  // (steps.h CountNameBeforeFirstStep) so that a marker that never matches can be answered with
  // the names that could have been one. torch_plugin reads this bit too.
  kOffBeforeFirstStep = 1 << 5,
};

// Tags carried in the high bits of event name ids: the name is a step marker, or names the
// capture range. They send the event through the slow path once; ids themselves stay below.
inline constexpr uint32_t kTagStepMarker = 1u << 30;
inline constexpr uint32_t kTagCaptureRange = 1u << 29;
inline constexpr uint32_t kTagMask = kTagStepMarker | kTagCaptureRange;
inline constexpr uint32_t kIdMask = kTagCaptureRange - 1;

struct Globals {
  bool active = false;  // a session is being recorded by this process image
  bool use_tsc = false;
  bool nvtx = false;
  bool itt = false;
  bool cuda = false;  // InitializeInjection starts CUPTI (cupti_source.h)
  // profile_memory is on and this process image's allocations are not recorded (memory_scope.h).
  bool memory_left_out = false;
  // Why events are not recorded right now (kOff* bits); 0 means recording. The per-event path
  // reads this one byte.
  std::atomic<uint8_t> off{0};
  ThreadSlot* slots = nullptr;
  uint32_t slot_count = 0;
  uint64_t ring_records = 0;
  // The rings' total may not pass this (bytes; 0: no bound): a thread whose ring would is left
  // without a slot, its events counted (events_without_slot).
  uint64_t ring_bytes_limit = 0;
  std::atomic<uint64_t> ring_bytes_mapped{0};
  std::atomic<uint64_t> events_without_slot{0};
  std::atomic<uint64_t> events_after_close{0};
  // The drain thread's futex word: a producer whose ring passes its wake mark sets it to 1 and
  // wakes the drain thread, which sets it back to 0 before each round.
  alignas(64) std::atomic<uint32_t> drain_bell{0};
};
extern Globals g;

inline uint64_t Now() {
#if defined(__x86_64__) || defined(__i386__)
  if (g.use_tsc) return __rdtsc();
#endif
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The push and pop fast paths read the TSC inline: a call to clock_gettime anywhere in them
// would make every call save and restore registers. Without a TSC they take the slow path.
inline bool FastClock() {
#if defined(__x86_64__) || defined(__i386__)
  return g.use_tsc;
#else
  return false;
#endif
}
inline uint64_t FastNow() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return 0;
#endif
}

// The calling thread's slot, claimed on its first event (the only slow step: a gettid and a
// pthread_setspecific). nullptr when every slot is taken or the runtime is inactive.
ThreadSlot* ClaimSlot();
extern __thread ThreadSlot* t_slot __attribute__((tls_model("initial-exec")));
// Set in the drain thread: what it allocates is the collector's, not the workload's.
extern __thread bool t_is_drain_thread __attribute__((tls_model("initial-exec")));

inline ThreadSlot* CurrentSlot() {
  ThreadSlot* s = t_slot;
  if (__builtin_expect(s != nullptr, 1)) return s;
  return ClaimSlot();
}

// Reserve's slow path (events.cpp): reads the tail, rings the drain thread when the ring is a
// quarter full (a futex wake: the only system call an event can make, at most once per drain
// round and per quarter ring), sets the next limit. nullptr when the ring is full.
Record* ReserveSlow(ThreadSlot* s, uint64_t n, uint64_t reserve);

// Room for `n` records, keeping `reserve` free for the pops of ranges already open.
inline Record* Reserve(ThreadSlot* s, uint64_t n, uint64_t reserve) {
  const uint64_t head = s->head.load(std::memory_order_relaxed);
  if (__builtin_expect(head + n + reserve > s->limit, 0)) return ReserveSlow(s, n, reserve);
  return &s->ring[head & s->mask];
}

inline void Commit(ThreadSlot* s, uint64_t n) {
  s->head.store(s->head.load(std::memory_order_relaxed) + n, std::memory_order_release);
}

// Headroom kept for pops: a push is refused when fewer than this many records are free, so
// the pops of the ranges already recorded (up to this depth) always fit.
inline constexpr uint64_t kPopReserve = 256;
// The deepest nesting recorded (the skip bitmaps and the pop reserve cover this many levels).
inline constexpr uint32_t kMaxLevels = 256;
static_assert(sizeof(ThreadSlot::level_marks) == kMaxLevels, "one mark byte per level");

inline void BumpRelaxed(std::atomic<uint64_t>& counter) {
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

enum LevelMarks : uint8_t {
  kLevelSkipped = 1 << 0,  // the level's push was dropped or paused: its pop is skipped too
  kLevelCapture = 1 << 1,  // opened by the capture range: its pop ends a capture
};
inline bool LevelMarked(const ThreadSlot* s, uint32_t level, uint8_t mark) {
  return level < kMaxLevels && (s->level_marks[level] & mark);
}
inline void SetLevelMark(ThreadSlot* s, uint32_t level, uint8_t mark, bool on) {
  if (level >= kMaxLevels) return;
  s->level_marks[level] = on ? s->level_marks[level] | mark : s->level_marks[level] & ~mark;
}
inline bool LevelSkipped(const ThreadSlot* s, uint32_t level) {
  return LevelMarked(s, level, kLevelSkipped);
}
inline void SetLevelSkipped(ThreadSlot* s, uint32_t level, bool skipped) {
  SetLevelMark(s, level, kLevelSkipped, skipped);
}

// The image's final flush is done: later events are counted only.
inline bool Closed() {
  return g.off.load(std::memory_order_acquire) & kOffClosed;
}

inline bool Recording() {
  return g.off.load(std::memory_order_relaxed) == 0;
}

// Wakes the drain thread now unless a wake is pending since its last round (a ring or the step
// log filling up faster than rounds come).
void RingDrainBell();

// The slow path of a tagged name (steps.cpp): a step boundary, or a capture range opening on
// `s` at `level` (-1 for events that open no level). Returns the untagged id.
uint32_t OnTaggedName(ThreadSlot* s, uint32_t tagged, int64_t level);
// Room for the `n` records of the push at `level`, or nullptr when recording is off, the level
// is too deep or the ring is full: the level is then marked skipped (so is its pop) and the
// loss counted.
Record* ReserveLevel(ThreadSlot* s, uint32_t level, uint64_t n);
// A capture range's level closed (after its pop was recorded).
void OnCaptureEnd(ThreadSlot* s, uint32_t level);

inline void WriteExt(ThreadSlot* s, uint64_t offset, const RecordExt& e) {
  *reinterpret_cast<RecordExt*>(
      &s->ring[(s->head.load(std::memory_order_relaxed) + offset) & s->mask]) = e;
}

// An event that needs no pairing (marks, counters, frames): recorded unless off or full.
// `ext` may be null. Returns false when it was not recorded.
inline bool EmitSimple(uint8_t kind, uint8_t flags, uint16_t domain, uint32_t name,
                       const RecordExt* ext) {
  ThreadSlot* s = nullptr;
  if (__builtin_expect(name & kTagMask, 0)) {
    if ((s = CurrentSlot()) == nullptr) return false;
    name = OnTaggedName(s, name, -1);
  }
  if (!Recording()) {
    if (g.off.load(std::memory_order_relaxed) & kOffClosed)
      g.events_after_close.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (s == nullptr && (s = CurrentSlot()) == nullptr) return false;
  const uint64_t n = ext ? 2 : 1;
  Record* r = Reserve(s, n, kPopReserve);
  if (r == nullptr) {
    BumpRelaxed(s->dropped_events);
    return false;
  }
  *r = Record{Now(), kind, static_cast<uint8_t>(flags | (ext ? kHasExt : 0)), domain, name};
  if (ext) WriteExt(s, 1, *ext);
  Commit(s, n);
  return true;
}

// A record as two 8-byte stores: the compiler otherwise writes kind, flags, domain and name
// one by one (up to four stores) when some of them are constants.
inline void PutRecord(Record* r, uint64_t ticks, uint8_t kind, uint8_t flags, uint16_t domain,
                      uint32_t name) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && offsetof(Record, kind) == 8 &&
                    offsetof(Record, flags) == 9 && offsetof(Record, domain) == 10 &&
                    offsetof(Record, name) == 12,
                "the packed word is the record's second half");
  const uint64_t word =
      uint64_t{kind} | uint64_t{flags} << 8 | uint64_t{domain} << 16 | uint64_t{name} << 32;
  memcpy(&r->ticks, &ticks, 8);
  memcpy(reinterpret_cast<char*>(r) + 8, &word, 8);
}

// The slow paths of EmitPushOn and EmitPop (events.cpp): a tagged name, not recording, too
// deep, a ring past its limit, a marked level, no slot yet (`s` null). They do all the checks
// again; the fast paths below only decide that none applies.
int EmitPushSlow(ThreadSlot* s, uint8_t kind, uint8_t flags, uint16_t domain, uint32_t name,
                 const RecordExt* ext);
int EmitPopSlow(ThreadSlot* s, uint8_t kind, uint16_t domain);

// A push outside windows before any step marker matched (kOffBeforeFirstStep): its level is
// skipped and its name counted (steps.h CountNameBeforeFirstStep).
int SkipCountingName(ThreadSlot* s, uint32_t level, uint32_t name);

// Opens a nesting level (NVTX push, ITT task) on slot `s`. Returns the new level's index
// (0-based). The per-event path of every range: what an application pays besides the clock
// read is this function, so its fast path is a few loads, one branch per condition and no
// call (no registers to save): anything unusual goes to EmitPushSlow as a tail call.
__attribute__((always_inline)) inline int EmitPushOn(ThreadSlot* s, uint8_t kind, uint8_t flags,
                                                     uint16_t domain, uint32_t name,
                                                     const RecordExt* ext) {
  const uint32_t level = s->depth;
  const uint64_t n = ext ? 2 : 1;
  const uint64_t head = s->head.load(std::memory_order_relaxed);
  const uint8_t off = g.off.load(std::memory_order_relaxed);
  if (__builtin_expect((name & kTagMask) != 0 || off != 0 || !FastClock() || level >= kMaxLevels ||
                           head + n + kPopReserve > s->limit,
                       0)) {
    // Outside windows and capture ranges (or paused) a push only opens a skipped level: kept
    // inline, since that is every event of a long job between its windows.
    if (off != 0 && !(off & kOffClosed) && !(name & kTagMask) && level < kMaxLevels) {
      // Before a step marker first matched, the name is counted too (a tail call: the fast
      // path saves no registers for it).
      if (__builtin_expect(off & kOffBeforeFirstStep, 0)) return SkipCountingName(s, level, name);
      s->depth = level + 1;
      s->level_marks[level] = kLevelSkipped;
      return static_cast<int>(level);
    }
    return EmitPushSlow(s, kind, flags, domain, name, ext);
  }
  // The level's marks are clear: its last pop cleared them (level_marks' invariant).
  s->depth = level + 1;
  PutRecord(&s->ring[head & s->mask], FastNow(), kind,
            static_cast<uint8_t>(flags | (ext ? kHasExt : 0)), domain, name);
  if (ext) *reinterpret_cast<RecordExt*>(&s->ring[(head + 1) & s->mask]) = *ext;
  s->head.store(head + n, std::memory_order_release);
  return static_cast<int>(level);
}

inline int EmitPush(uint8_t kind, uint8_t flags, uint16_t domain, uint32_t name,
                    const RecordExt* ext) {
  ThreadSlot* s = t_slot;
  if (__builtin_expect(s == nullptr, 0)) return EmitPushSlow(s, kind, flags, domain, name, ext);
  return EmitPushOn(s, kind, flags, domain, name, ext);
}

// A pop without a push: recorded (the reader reports it) and refused, as NVTX does.
int EmitUnmatchedPop(ThreadSlot* s, uint8_t kind, uint16_t domain);

// Closes the innermost level of slot `s`. Returns the closed level's index, or -1 for a pop
// without a push. Pops draw on the reserve that pushes left free, so a recorded range is
// always closed; one byte tells whether the level was skipped or ends a capture.
__attribute__((always_inline)) inline int EmitPopOn(ThreadSlot* s, uint8_t kind, uint16_t domain) {
  const uint32_t level = s->depth - 1;  // wraps to the slow path when depth is 0
  const uint64_t head = s->head.load(std::memory_order_relaxed);
  if (__builtin_expect(
          level >= kMaxLevels || s->level_marks[level] != 0 || !FastClock() || head + 1 > s->limit,
          0)) {
    // The pop of a skipped level that ends no capture: nothing to record.
    if (level < kMaxLevels && s->level_marks[level] == kLevelSkipped) {
      s->level_marks[level] = 0;
      s->depth = level;
      return static_cast<int>(level);
    }
    return EmitPopSlow(s, kind, domain);
  }
  s->depth = level;
  PutRecord(&s->ring[head & s->mask], FastNow(), kind, 0, domain, 0);
  s->head.store(head + 1, std::memory_order_release);
  return static_cast<int>(level);
}

__attribute__((always_inline)) inline int EmitPop(uint8_t kind, uint16_t domain) {
  ThreadSlot* s = t_slot;
  if (__builtin_expect(s == nullptr, 0)) return EmitPopSlow(s, kind, domain);
  return EmitPopOn(s, kind, domain);
}

// Thread-independent ranges (NVTX RangeStart/End): ids unique in the process.
uint64_t EmitRangeStart(uint8_t flags, uint16_t domain, uint32_t name, const RecordExt* ext);
void EmitRangeEnd(uint64_t id);

}  // namespace profsh::runtime
