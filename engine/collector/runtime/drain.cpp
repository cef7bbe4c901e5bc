#include "engine/collector/runtime/drain.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "engine/collector/runtime/registry.h"
#include "engine/collector/runtime/runtime.h"
#include "engine/collector/runtime/steps.h"

namespace profsh::runtime {

StreamState g_stream;

namespace {

using stream::PutVarint;

// A growable byte buffer on malloc: the drain thread is not on anyone's per-event path.
struct Buffer {
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t capacity = 0;
  bool failed = false;

  uint8_t* Room(size_t n) {
    if (size + n > capacity) {
      size_t want = capacity ? capacity * 2 : (1 << 20);
      while (want < size + n) want *= 2;
      auto* p = static_cast<uint8_t*>(realloc(data, want));
      if (p == nullptr) {
        failed = true;
        return nullptr;
      }
      data = p;
      capacity = want;
    }
    return data + size;
  }
  void Put(const void* p, size_t n) {
    if (uint8_t* d = Room(n)) {
      memcpy(d, p, n);
      size += n;
    }
  }
  void Varint(uint64_t v) {
    if (uint8_t* d = Room(10)) size = static_cast<size_t>(PutVarint(d, v) - data);
  }
  void U8(uint8_t v) { Put(&v, 1); }
  void U32(uint32_t v) { Put(&v, 4); }
  void U64(uint64_t v) { Put(&v, 8); }
  void Str(const char* s, size_t n) {
    Varint(n);
    Put(s, n);
  }
};

Buffer g_out;     // blocks in the order they are written
Buffer g_events;  // this round's event blocks, written after the strings they use
Buffer g_block;   // one block's payload while it is built

uint32_t g_strings_defined = 0;  // every id below is written (except those in g_pending)
uint32_t* g_pending = nullptr;   // ids that were reserved but not yet published
size_t g_pending_count = 0, g_pending_capacity = 0;
uint64_t g_meta_next = 0;
uint64_t g_last_process_drops[4] = {};
// libprofsh_memory.so's count of blocks it could not track (present only with profile_memory).
using UntrackedFn = uint64_t (*)();
UntrackedFn g_memory_untracked = nullptr;
bool g_memory_untracked_resolved = false;
// Losses that have no field in the drops block are said once per process image, in a notice.
bool g_said_untracked_memory = false;
bool g_said_lost_steps = false;

// Function address -> string id, for ITT's task_begin_fn (symbolized here, off the event path).
struct FnEntry {
  uint64_t address;
  uint32_t id;
};
FnEntry g_fn_cache[1024];

void FinishBlock(Buffer& into, uint32_t type) {
  stream::BlockHeader h{type, static_cast<uint32_t>(g_block.size)};
  into.Put(&h, sizeof(h));
  into.Put(g_block.data, g_block.size);
  g_block.size = 0;
}

uint32_t FunctionName(uint64_t address) {
  FnEntry& e = g_fn_cache[(address >> 4) & 1023];
  if (e.address == address && address != 0) return e.id;
  char text[512];
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(address), &info) && info.dli_sname) {
    snprintf(text, sizeof text, "%s", info.dli_sname);
  } else {
    snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
  }
  uint32_t id = registry().strings().Intern(text, strlen(text));
  e = FnEntry{address, id};
  return id;
}

void PutAttrs(const Record& r, const RecordExt* ext, const RecordExt* payload) {
  uint8_t flags = r.flags & 7;
  if (!ext) flags = 0;
  g_block.Varint(flags);
  if (flags & stream::kAttrCategory) g_block.Varint(ext->category);
  if (flags & stream::kAttrColor) g_block.Varint(ext->color);
  if (flags & stream::kAttrPayload) {
    uint8_t type = (r.flags >> 3) & 7;
    g_block.U8(type);
    uint64_t bits = payload ? payload->value : ext->value;
    if (type == stream::kPayloadI64) bits = stream::ZigZag(static_cast<int64_t>(bits));
    if (type == stream::kPayloadI32) bits = stream::ZigZag(static_cast<int32_t>(bits));
    g_block.Varint(bits);
  }
}

// Encodes one slot's records [tail, head) as a kEvents block.
void EncodeEvents(ThreadSlot& s, uint64_t tail, uint64_t head) {
  // Room for the block's header in front, so that the block can become g_events as it is.
  g_block.size = 0;
  g_block.Room(sizeof(stream::BlockHeader));
  g_block.size = sizeof(stream::BlockHeader);
  g_block.Varint(s.index);
  const Record& first = s.ring[tail & s.mask];
  g_block.U64(first.ticks);
  const size_t count_at = g_block.size;
  g_block.U32(0);
  uint32_t count = 0;
  uint64_t previous = first.ticks;
  for (uint64_t i = tail; i < head;) {
    const Record r = s.ring[i & s.mask];
    // Pushes, pops and task ends without attributes are nearly all of a busy ring: encoded
    // here with one room check, the same bytes as the switch below writes.
    if ((r.kind == stream::kPop || r.kind == stream::kTaskEnd ||
         ((r.kind == stream::kPush || r.kind == stream::kTaskBegin) && r.flags == 0)) &&
        r.ticks >= previous) {
      uint8_t* p = g_block.Room(32);
      if (p == nullptr) break;
      p = PutVarint(p, (r.ticks - previous) << 4 | r.kind);
      previous = r.ticks;
      p = PutVarint(p, r.domain);
      if (r.kind == stream::kPush) {
        p = PutVarint(p, r.name);
        *p++ = 0;  // no attributes
      } else if (r.kind == stream::kTaskBegin) {
        p = PutVarint(p, r.name);
        *p++ = 0;  // no task id
        *p++ = 0;  // no parent id
      }
      g_block.size = static_cast<size_t>(p - g_block.data);
      ++count;
      ++i;
      continue;
    }
    const uint64_t n = RecordsOf(r);
    const RecordExt* ext = (r.flags & kHasExt)
                               ? reinterpret_cast<const RecordExt*>(&s.ring[(i + 1) & s.mask])
                               : nullptr;
    const RecordExt* payload =
        n == 3 ? reinterpret_cast<const RecordExt*>(&s.ring[(i + 2) & s.mask]) : nullptr;
    i += n;
    const uint64_t delta = r.ticks >= previous ? r.ticks - previous : 0;
    previous = r.ticks >= previous ? r.ticks : previous;
    uint8_t kind = r.kind;
    uint32_t name = r.name;
    if (kind == kTaskBeginFn) {
      kind = stream::kTaskBegin;
      name = FunctionName(ext ? ext->value : 0);
    }
    if (kind >= stream::kKindCount && kind != kTaskBeginIds) continue;
    if (kind == kTaskBeginIds) kind = stream::kTaskBegin;
    g_block.Varint(delta << 4 | kind);
    ++count;
    switch (kind) {
      case stream::kPush:
      case stream::kMark:
        g_block.Varint(r.domain);
        g_block.Varint(name);
        PutAttrs(r, ext, nullptr);
        break;
      case stream::kPop:
      case stream::kTaskEnd:
        g_block.Varint(r.domain);
        break;
      case stream::kRangeStart:
        g_block.Varint(ext ? ext->value : 0);
        g_block.Varint(r.domain);
        g_block.Varint(name);
        PutAttrs(r, ext, payload);
        break;
      case stream::kRangeEnd:
        g_block.Varint(ext ? ext->value : 0);
        break;
      case stream::kFrameBegin:
      case stream::kFrameEnd:
        g_block.Varint(r.domain);
        g_block.Varint(ext ? ext->value : 0);
        break;
      case stream::kCounterSet:
        g_block.Varint(name);
        g_block.Varint(ext ? ext->value : 0);
        break;
      case stream::kTaskBegin: {
        g_block.Varint(r.domain);
        g_block.Varint(name);
        const bool ids = r.kind == kTaskBeginIds && ext;
        g_block.Varint(ids ? ext->value : 0);
        g_block.Varint(ids ? (uint64_t{ext->category} << 32 | ext->color) : 0);
        break;
      }
      case stream::kOpBegin: {
        const RecordExt* second = reinterpret_cast<const RecordExt*>(&s.ring[(i - 1) & s.mask]);
        const RecordExt* first = reinterpret_cast<const RecordExt*>(&s.ring[(i - 2) & s.mask]);
        g_block.Varint(name);
        g_block.Varint(first->category);   // shapes
        g_block.Varint(first->color);      // dtypes
        g_block.Varint(second->category);  // stack
        g_block.Varint(stream::ZigZag(static_cast<int64_t>(first->value)));
        g_block.Varint(second->color);  // forward thread
        g_block.U8(r.flags);            // scope
        g_block.Varint(second->value);  // flops
        break;
      }
      case stream::kMemory:
        g_block.Varint(stream::ZigZag(static_cast<int64_t>(ext ? ext->value : 0)));
        g_block.Varint(ext ? (uint64_t{ext->category} << 32 | ext->color) : 0);
        break;
      default:  // kPause, kResume, kThreadEnd: no fields
        break;
    }
  }
  if (g_block.failed) {
    // Out of memory: the block misses bytes, and a reader would reject the stream at it.
    g_block.size = 0;
    return;
  }
  memcpy(g_block.data + count_at, &count, 4);
  const stream::BlockHeader h{stream::kEvents,
                              static_cast<uint32_t>(g_block.size - sizeof(stream::BlockHeader))};
  memcpy(g_block.data, &h, sizeof h);
  if (g_events.size == 0) {
    std::swap(g_events, g_block);  // the usual busy round: one thread's block, not copied
  } else {
    g_events.Put(g_block.data, g_block.size);
  }
  g_block.size = 0;
}

void AnnounceThread(ThreadSlot& s) {
  g_block.size = 0;
  g_block.Varint(s.index);
  int64_t tid = s.tid.load(std::memory_order_acquire);
  g_block.Put(&tid, 8);
  uint32_t name = s.name.load(std::memory_order_acquire);
  if (name != 0) {
    const StringNode* node = registry().strings().ById(name);
    g_block.Str(node ? node->text : "", node ? node->length : 0);
  } else {
    g_block.Str("", 0);
  }
  FinishBlock(g_out, stream::kThread);
  s.announced = true;
  s.announced_name = name;
}

void ReportDrops(ThreadSlot& s, bool force) {
  uint64_t ranges = s.dropped_ranges.load(std::memory_order_relaxed);
  uint64_t events = s.dropped_events.load(std::memory_order_relaxed);
  uint64_t pops = s.unmatched_pops.load(std::memory_order_relaxed);
  if (!force && ranges == s.written_ranges && events == s.written_events && pops == s.written_pops)
    return;
  if (ranges == 0 && events == 0 && pops == 0) return;
  g_block.size = 0;
  g_block.Varint(s.index);
  g_block.Varint(ranges);
  g_block.Varint(events);
  g_block.Varint(pops);
  FinishBlock(g_out, stream::kDrops);
  s.written_ranges = ranges;
  s.written_events = events;
  s.written_pops = pops;
}

void DrainMetadata() {
  Registry& reg = registry();
  while (const MetaEntry* e = reg.Entry(g_meta_next)) {
    g_block.size = 0;
    switch (e->type) {
      case kMetaDomain:
        g_block.Varint(e->a);
        g_block.U8(static_cast<uint8_t>(e->c));
        {
          const StringNode* n = reg.strings().ById(static_cast<uint32_t>(e->b));
          g_block.Str(n ? n->text : "", n ? n->length : 0);
        }
        FinishBlock(g_out, stream::kDomain);
        break;
      case kMetaCategory: {
        g_block.Varint(e->a);
        g_block.Varint(e->b);
        const StringNode* n = reg.strings().ById(static_cast<uint32_t>(e->c));
        g_block.Str(n ? n->text : "", n ? n->length : 0);
        FinishBlock(g_out, stream::kCategory);
        break;
      }
      case kMetaCounter: {
        g_block.Varint(e->a);
        g_block.Varint(e->b);
        g_block.U8(static_cast<uint8_t>(e->c >> 32));
        const StringNode* n = reg.strings().ById(static_cast<uint32_t>(e->c));
        g_block.Str(n ? n->text : "", n ? n->length : 0);
        FinishBlock(g_out, stream::kCounter);
        break;
      }
      case kMetaOsThreadName: {
        int64_t tid = static_cast<int64_t>(e->a);
        g_block.Put(&tid, 8);
        const StringNode* n = reg.strings().ById(static_cast<uint32_t>(e->b));
        g_block.Str(n ? n->text : "", n ? n->length : 0);
        FinishBlock(g_out, stream::kOsThreadName);
        break;
      }
      default:
        break;
    }
    ++g_meta_next;
  }
}

void DefineString(const StringNode* node, Buffer& into) {
  g_block.size = 0;
  g_block.Varint(node->id);
  g_block.Str(node->text, node->length);
  FinishBlock(into, stream::kString);
}

// Strings go out before the events of the round: every id an event of this round uses was
// published before the event was written, so reading the allocation count after the rings
// covers them all.
void DefineStrings(Buffer& into) {
  StringTable& strings = registry().strings();
  size_t keep = 0;
  for (size_t i = 0; i < g_pending_count; ++i) {
    if (const StringNode* n = strings.ById(g_pending[i])) {
      DefineString(n, into);
    } else {
      g_pending[keep++] = g_pending[i];
    }
  }
  g_pending_count = keep;
  const uint32_t allocated = strings.allocated();
  for (; g_strings_defined < allocated; ++g_strings_defined) {
    if (const StringNode* n = strings.ById(g_strings_defined)) {
      DefineString(n, into);
    } else {
      if (g_pending_count == g_pending_capacity) {
        size_t want = g_pending_capacity ? g_pending_capacity * 2 : 64;
        auto* p = static_cast<uint32_t*>(realloc(g_pending, want * sizeof(uint32_t)));
        if (p == nullptr) continue;  // that id's text will be missing; the reader says so
        g_pending = p;
        g_pending_capacity = want;
      }
      g_pending[g_pending_count++] = g_strings_defined;
    }
  }
}

void ReportProcessDrops() {
  uint64_t now[4] = {g.events_without_slot.load(std::memory_order_relaxed),
                     registry().strings().overflows(), registry().dropped_metadata(),
                     g.events_after_close.load(std::memory_order_relaxed)};
  if (memcmp(now, g_last_process_drops, sizeof now) == 0) return;
  g_block.size = 0;
  for (uint64_t v : now) g_block.Varint(v);
  FinishBlock(g_out, stream::kProcessDrops);
  memcpy(g_last_process_drops, now, sizeof now);
}

// The first time `count` is not zero: "<what>: <count> <detail>" (the count so far).
void NoticeOnce(bool& said, uint64_t count, const char* what, const char* detail) {
  if (said || count == 0) return;
  char text[256];
  int length = snprintf(text, sizeof text, "%s: %llu %s", what,
                        static_cast<unsigned long long>(count), detail);
  if (length < 0) return;
  g_block.size = 0;
  g_block.Str(text, std::min(static_cast<size_t>(length), sizeof text - 1));
  FinishBlock(g_out, stream::kNotice);
  said = true;
}

void ReportNoticedLosses() {
  if (!g_memory_untracked_resolved) {
    g_memory_untracked =
        reinterpret_cast<UntrackedFn>(dlsym(RTLD_DEFAULT, "profsh_memory_untracked"));
    g_memory_untracked_resolved = true;
  }
  if (g_memory_untracked != nullptr) {
    NoticeOnce(g_said_untracked_memory, g_memory_untracked(), "profile_memory",
               "blocks found no room in the size table and are not counted (allocations and "
               "frees); memory figures are low by their size");
  }
  NoticeOnce(g_said_lost_steps, LostStepRecords(), "steps",
             "step boundaries, capture-range edges or stops found the step log full and were not "
             "recorded; windows near them may be cut wrongly");
}

}  // namespace

void AppendBlock(uint32_t type, const void* payload, uint32_t size) {
  stream::BlockHeader h{type, size};
  g_out.Put(&h, sizeof h);
  g_out.Put(payload, size);
}

void AppendClock() {
  timespec mono, real;
  uint64_t ticks = Now();
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  uint8_t payload[24];
  int64_t m = static_cast<int64_t>(mono.tv_sec) * 1000000000 + mono.tv_nsec;
  int64_t r = static_cast<int64_t>(real.tv_sec) * 1000000000 + real.tv_nsec;
  memcpy(payload, &ticks, 8);
  memcpy(payload + 8, &m, 8);
  memcpy(payload + 16, &r, 8);
  AppendBlock(stream::kClock, payload, sizeof payload);
}

bool FlushBlocks() {
  if (g_stream.fd < 0 || g_stream.write_failed || g_out.failed) {
    g_out.size = 0;
    return false;
  }
  size_t done = 0;
  while (done < g_out.size) {
    ssize_t n = write(g_stream.fd, g_out.data + done, g_out.size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      g_stream.write_failed = true;
      // The one message the runtime prints: losing the trace must not go unnoticed.
      dprintf(2, "profsh: cannot write %s: %s; this process's later events are lost\n",
              g_stream.path, strerror(errno));
      break;
    }
    done += static_cast<size_t>(n);
  }
  g_out.size = 0;
  return !g_stream.write_failed;
}

double DrainOnce(bool yield) {
  double fullest = 0;
  DrainStepEvents();
  g_events.size = 0;
  for (uint32_t i = 0; i < g.slot_count; ++i) {
    // A final flush is waiting: the rest is left to it.
    if (yield && g_stream.final_flushes_waiting.load(std::memory_order_relaxed) != 0) break;
    ThreadSlot& s = g.slots[i];
    uint32_t state = s.state.load(std::memory_order_acquire);
    if (state == kSlotFree || state == kSlotClaiming) continue;
    if (!s.announced || s.name.load(std::memory_order_relaxed) != s.announced_name)
      AnnounceThread(s);
    uint64_t head = s.head.load(std::memory_order_acquire);
    uint64_t tail = s.tail.load(std::memory_order_relaxed);
    if (head != tail) {
      double fill = static_cast<double>(head - tail) / static_cast<double>(s.mask + 1);
      if (fill > fullest) fullest = fill;
      EncodeEvents(s, tail, head);
      s.tail.store(head, std::memory_order_release);
    }
    ReportDrops(s, false);
    if (state == kSlotExiting && s.head.load(std::memory_order_acquire) == head) {
      // Its thread is gone and everything it wrote is encoded: free the slot for a new thread.
      s.announced = false;
      s.announced_name = 0;
      s.written_ranges = s.written_events = s.written_pops = 0;
      s.dropped_ranges.store(0, std::memory_order_relaxed);
      s.dropped_events.store(0, std::memory_order_relaxed);
      s.unmatched_pops.store(0, std::memory_order_relaxed);
      s.state.store(kSlotFree, std::memory_order_release);
    }
  }
  // Names defined after the rings are read: whatever the events just encoded refer to (a domain,
  // a counter) was published before those events were written, so it is in this round.
  DrainMetadata();
  DefineStrings(g_out);
  ReportProcessDrops();
  ReportNoticedLosses();
  if (g_events.size >= (64 << 10)) {
    // A busy round's events are written from the buffer they were encoded in, after the
    // blocks they refer to, instead of being copied behind them.
    FlushBlocks();
    std::swap(g_out, g_events);
    FlushBlocks();
    std::swap(g_out, g_events);
  } else {
    g_out.Put(g_events.data, g_events.size);
  }
  AppendClock();
  FlushBlocks();
  return fullest;
}

void ResetDrainState() {
  g_out.size = g_events.size = g_block.size = 0;
  // The child's stream is new: every string it uses must be defined in it again.
  g_strings_defined = 0;
  g_pending_count = 0;
  g_meta_next = 0;  // domains and counters too
  memset(g_last_process_drops, 0, sizeof g_last_process_drops);
  g_said_untracked_memory = g_said_lost_steps = false;
  for (uint32_t i = 0; i < g.slot_count; ++i) {
    ThreadSlot& s = g.slots[i];
    s.announced = false;
    s.announced_name = 0;
    s.written_ranges = s.written_events = s.written_pops = 0;
  }
}

}  // namespace profsh::runtime
