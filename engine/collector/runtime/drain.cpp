#include "engine/collector/runtime/drain.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "engine/collector/runtime/cupti_source.h"
#include "engine/collector/runtime/registry.h"
#include "engine/collector/runtime/runtime.h"
#include "engine/collector/runtime/steps.h"

namespace profsh::runtime {

StreamState g_stream;

namespace {

BlockBuffer g_out;     // blocks in the order they are written
BlockBuffer g_events;  // this round's event blocks, written after the strings they use
BlockBuffer g_block;   // one block's payload while it is built

uint32_t g_strings_defined = 0;  // every id below is written (except those in g_pending)
uint32_t* g_pending = nullptr;   // ids that were reserved but not yet published
size_t g_pending_count = 0, g_pending_capacity = 0;
uint64_t g_meta_next = 0;
uint64_t g_round_events = 0;  // events encoded in this drain round
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

// The text of an interned string ("" when the id has none).
std::string_view Text(uint32_t id) {
  const StringNode* node = id != 0 ? registry().strings().ById(id) : nullptr;
  return node ? std::string_view(node->text, node->length) : std::string_view();
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

void FillAttrs(const Record& r, const RecordExt* ext, const RecordExt* payload,
               stream::EventAttrs* a) {
  if (!ext) {
    a->flags = 0;
    return;
  }
  a->flags = r.flags & 7;
  a->category = ext->category;
  a->color = ext->color;
  a->payload_type = (r.flags >> 3) & 7;
  a->payload = payload ? payload->value : ext->value;
  // Signed payloads were stored as their own width; the codec takes them sign-extended.
  if (a->payload_type == stream::kPayloadI32)
    a->payload = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(a->payload)));
}

// A slot's ring as the drain reads it, copied out of the slot once a block: the encoder's byte
// stores may alias anything, so `s.ring[i & s.mask]` reloads both fields from the slot for
// every record, and a slot line the drain keeps reading is one the producer's stores wait for.
struct RingView {
  const Record* ring;
  uint64_t mask;
  const Record& operator[](uint64_t i) const { return ring[i & mask]; }
  const RecordExt* Ext(uint64_t i) const {
    return reinterpret_cast<const RecordExt*>(&ring[i & mask]);
  }
};

// The stream event of the ring record at `i` (which takes `n` slots). Only the fields the
// event's kind has are set: the encoder reads no others, and the drain fills one event tens of
// millions of times a second.
void FillEvent(const RingView& ring, uint64_t i, uint64_t n, const Record& r,
               stream::StreamEvent& e) {
  const RecordExt* ext = (r.flags & kHasExt) ? ring.Ext(i + 1) : nullptr;
  e.ticks = r.ticks;
  e.kind = r.kind;
  e.domain = r.domain;
  e.name = r.name;
  switch (r.kind) {
    case stream::kPush:
    case stream::kMark:
      FillAttrs(r, ext, nullptr, &e.attrs);
      break;
    case stream::kRangeStart:
      e.range_id = ext ? ext->value : 0;
      FillAttrs(r, ext, n == 3 ? ring.Ext(i + 2) : nullptr, &e.attrs);
      break;
    case stream::kRangeEnd:
      e.range_id = ext ? ext->value : 0;
      break;
    case stream::kFrameBegin:
    case stream::kFrameEnd:
      e.frame_id = ext ? ext->value : 0;
      break;
    case stream::kCounterSet:
      e.value = ext ? ext->value : 0;
      break;
    case stream::kTaskBegin:
      e.task_id = e.parent_id = 0;
      break;
    case kTaskBeginFn:
      e.kind = stream::kTaskBegin;
      e.name = FunctionName(ext ? ext->value : 0);
      e.task_id = e.parent_id = 0;
      break;
    case kTaskBeginIds:
      e.kind = stream::kTaskBegin;
      e.task_id = ext ? ext->value : 0;
      e.parent_id = ext ? uint64_t{ext->category} << 32 | ext->color : 0;
      break;
    case stream::kOpBegin: {
      // [op][shapes, dtypes, sequence][stack, forward thread, flops]
      const RecordExt* first = ring.Ext(i + 1);
      const RecordExt* second = ring.Ext(i + 2);
      e.domain = 0;
      e.op.shapes = first->category;
      e.op.dtypes = first->color;
      e.op.sequence = static_cast<int64_t>(first->value);
      e.op.stack = second->category;
      e.op.forward_thread = second->color;
      e.op.flops = second->value;
      e.op.scope = r.flags;
      break;
    }
    case stream::kMemory:
      e.bytes = static_cast<int64_t>(ext ? ext->value : 0);
      e.address = ext ? (uint64_t{ext->category} << 32 | ext->color) : 0;
      break;
    default:
      break;
  }
}

// Encodes one slot's records [tail, head) as a kEvents block.
void EncodeEvents(ThreadSlot& s, uint64_t tail, uint64_t head) {
  // Room for the block's header in front, so that the block can become g_events as it is.
  g_block.used = 0;
  if (g_block.Room(sizeof(stream::BlockHeader)) != nullptr)
    g_block.used = sizeof(stream::BlockHeader);
  const RingView ring{s.ring, s.mask};
  stream::EventsHeader header;
  header.slot = s.index;
  header.first_ticks = ring[tail].ticks;
  header.Encode(g_block);
  const size_t count_at = g_block.used - sizeof header.count;
  uint32_t count = 0;
  uint64_t previous = header.first_ticks;
  stream::StreamEvent e;
  for (uint64_t i = tail; i < head;) {
    const Record r = ring[i];
    const uint64_t n = RecordsOf(r);
    // Plain pushes and pops, most of any stream, with their kind a constant for the encoder.
    if (r.kind == stream::kPop) {
      e.ticks = r.ticks;
      e.kind = stream::kPop;
      e.domain = r.domain;
      stream::EncodeEvent(g_block, previous, e);
      previous = e.ticks >= previous ? e.ticks : previous;
      ++count;
    } else if (r.kind == stream::kPush && !(r.flags & kHasExt)) {
      e.ticks = r.ticks;
      e.kind = stream::kPush;
      e.domain = r.domain;
      e.name = r.name;
      e.attrs.flags = 0;
      stream::EncodeEvent(g_block, previous, e);
      previous = e.ticks >= previous ? e.ticks : previous;
      ++count;
    } else if (r.kind < stream::kKindCount || r.kind == kTaskBeginFn || r.kind == kTaskBeginIds) {
      FillEvent(ring, i, n, r, e);
      stream::EncodeEvent(g_block, previous, e);
      previous = e.ticks >= previous ? e.ticks : previous;
      ++count;
    }
    i += n;
  }
  if (g_block.failed) {
    // Out of memory: the block misses bytes, and a reader would reject the stream at it.
    g_block.used = 0;
    return;
  }
  memcpy(g_block.At(count_at), &count, sizeof count);
  g_round_events += count;
  const stream::BlockHeader h{stream::kEvents,
                              static_cast<uint32_t>(g_block.used - sizeof(stream::BlockHeader))};
  memcpy(g_block.data, &h, sizeof h);
  if (g_events.used == 0) {
    std::swap(g_events, g_block);  // the usual busy round: one thread's block, not copied
  } else {
    stream::PutBytes(g_events, g_block.data, g_block.used);
  }
  g_block.used = 0;
}

void AnnounceThread(ThreadSlot& s) {
  const uint32_t name = s.name.load(std::memory_order_acquire);
  stream::AppendBlockTo(
      g_out, stream::ThreadBlock{s.index, s.tid.load(std::memory_order_acquire), Text(name)});
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
  stream::AppendBlockTo(g_out, stream::DropsBlock{s.index, ranges, events, pops});
  s.written_ranges = ranges;
  s.written_events = events;
  s.written_pops = pops;
}

void DrainMetadata() {
  Registry& reg = registry();
  while (const MetaEntry* e = reg.Entry(g_meta_next)) {
    switch (e->type) {
      case kMetaDomain:
        stream::AppendBlockTo(g_out, stream::DomainBlock{e->a, static_cast<uint8_t>(e->c),
                                                         Text(static_cast<uint32_t>(e->b))});
        break;
      case kMetaCategory:
        stream::AppendBlockTo(g_out,
                              stream::CategoryBlock{e->a, e->b, Text(static_cast<uint32_t>(e->c))});
        break;
      case kMetaCounter:
        stream::AppendBlockTo(g_out,
                              stream::CounterBlock{e->a, e->b, static_cast<uint8_t>(e->c >> 32),
                                                   Text(static_cast<uint32_t>(e->c))});
        break;
      case kMetaOsThreadName:
        stream::AppendBlockTo(g_out, stream::OsThreadNameBlock{static_cast<int64_t>(e->a),
                                                               Text(static_cast<uint32_t>(e->b))});
        break;
      default:
        break;
    }
    ++g_meta_next;
  }
}

void DefineString(const StringNode* node, BlockBuffer& into) {
  stream::AppendBlockTo(into,
                        stream::StringBlock{node->id, std::string_view(node->text, node->length)});
}

// Strings go out before the events of the round: every id an event of this round uses was
// published before the event was written, so reading the allocation count after the rings
// covers them all.
void DefineStrings(BlockBuffer& into) {
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
  stream::AppendBlockTo(g_out, stream::ProcessDropsBlock{now[0], now[1], now[2], now[3]});
  memcpy(g_last_process_drops, now, sizeof now);
}

// The first time `count` is not zero: "<what>: <count> <detail>" (the count so far).
void NoticeOnce(bool& said, uint64_t count, const char* what, const char* detail) {
  if (said || count == 0) return;
  char text[256];
  int length = snprintf(text, sizeof text, "%s: %llu %s", what,
                        static_cast<unsigned long long>(count), detail);
  if (length < 0) return;
  stream::AppendBlockTo(g_out, stream::NoticeBlock{std::string_view(
                                   text, std::min(static_cast<size_t>(length), sizeof text - 1))});
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
             "step boundaries, capture-range edges, stops or on-demand requests found the step log "
             "(or the queue of waiting requests) full and were not "
             "recorded; windows near them may be cut wrongly");
}

}  // namespace

BlockBuffer& PendingBlocks() {
  return g_out;
}

void AppendClock() {
  timespec mono, real;
  uint64_t ticks = Now();
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  stream::AppendBlockTo(
      g_out,
      stream::ClockBlock{ticks, static_cast<int64_t>(mono.tv_sec) * 1000000000 + mono.tv_nsec,
                         static_cast<int64_t>(real.tv_sec) * 1000000000 + real.tv_nsec});
}

void AdoptStreamFd(int fd) {
  // Three quarters of the way to the descriptor limit (at most 1024: a larger table costs the
  // kernel memory for every process), where a workload's own files rarely reach.
  rlimit limit{};
  rlim_t highest = getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 1024;
  if (highest > 1024) highest = 1024;
  const int high = fcntl(fd, F_DUPFD_CLOEXEC, static_cast<int>(highest * 3 / 4));
  if (high >= 0) {
    close(fd);
    fd = high;
  }
  g_stream.fd = fd;
  struct stat st;
  if (fstat(fd, &st) == 0) {
    g_stream.device = st.st_dev;
    g_stream.inode = st.st_ino;
  }
}

bool StreamFdIsOurs() {
  struct stat st;
  return g_stream.fd >= 0 && fstat(g_stream.fd, &st) == 0 && st.st_dev == g_stream.device &&
         st.st_ino == g_stream.inode;
}

namespace {

// The workload closed the stream's descriptor (and may have reused its number for a file of
// its own, which is left alone): the stream is opened again by its path and goes on at its end.
bool ReopenStream() {
  const dev_t device = g_stream.device;
  const ino_t inode = g_stream.inode;
  const int fd = open(g_stream.path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return false;
  AdoptStreamFd(fd);  // remembers the file it opened: compared with the stream's below
  if (g_stream.device == device && g_stream.inode == inode) return true;
  // Not our file any more (the session folder was replaced): nothing of it is ours to write.
  close(g_stream.fd);
  g_stream.fd = -1;
  errno = ESTALE;
  return false;
}

}  // namespace

bool FlushBlocks() {
  if (g_stream.fd < 0 || g_stream.write_failed || g_out.failed) {
    g_out.used = 0;
    return false;
  }
  if (!StreamFdIsOurs() && !ReopenStream()) {
    g_stream.write_failed = true;
    g_stream.write_errno = errno;
    dprintf(2, "profsh: cannot reopen %s: %s; this process's later events are lost\n",
            g_stream.path, strerror(errno));
    g_out.used = 0;
    return false;
  }
  const uint64_t flush_start = g_stream.written;
  size_t done = 0;
  while (done < g_out.used) {
    ssize_t n = write(g_stream.fd, g_out.data + done, g_out.used - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      g_stream.write_failed = true;
      g_stream.write_errno = n < 0 ? errno : ENOSPC;
      // A partial block would end the stream in the middle of one: the stream is cut back to
      // where this round (or this flush) began, which also gives its space back.
      const uint64_t keep = g_stream.in_round ? g_stream.round_start : flush_start;
      // Checked again: the workload may have closed our number and reused it since the check
      // above, and its file is not ours to cut.
      if (StreamFdIsOurs() && ftruncate(g_stream.fd, static_cast<off_t>(keep)) == 0 &&
          lseek(g_stream.fd, static_cast<off_t>(keep), SEEK_SET) >= 0) {
        g_stream.written = keep;
      }
      // The one message the runtime prints: losing the trace must not go unnoticed.
      dprintf(2, "profsh: cannot write %s: %s; this process's later events are lost\n",
              g_stream.path, strerror(g_stream.write_errno));
      break;
    }
    done += static_cast<size_t>(n);
    g_stream.written += static_cast<uint64_t>(n);
  }
  g_out.used = 0;
  return !g_stream.write_failed;
}

void AppendLossNotice() {
  if (!g_stream.write_failed || g_stream.fd < 0) return;
  char text[256];
  int length =
      snprintf(text, sizeof text,
               "the stream could not be written from byte %llu on (%s): %llu events were "
               "not recorded",
               static_cast<unsigned long long>(g_stream.written), strerror(g_stream.write_errno),
               static_cast<unsigned long long>(g_stream.unwritten_events));
  if (length < 0) return;
  g_out.used = 0;
  g_out.failed = false;
  stream::AppendBlockTo(g_out, stream::NoticeBlock{std::string_view(
                                   text, std::min(static_cast<size_t>(length), sizeof text - 1))});
  g_stream.write_failed = false;  // once more, for the notice and the end block behind it
  // The cut took back blocks this round's drain state counts as written (thread, string and
  // metadata blocks); an event round after it could name what the stream no longer defines.
  g_stream.rounds_refused = true;
}

double DrainOnce(bool yield) {
  double fullest = 0;
  if (g_stream.rounds_refused) return fullest;  // after a loss notice: the end and exec only
  g_stream.in_round = true;
  g_stream.round_start = g_stream.written;
  g_round_events = 0;
  DrainStepEvents();
  g_events.used = 0;
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
  // GPU records intern kernel and call names: before the strings of the round are defined.
  DrainGpuActivity(g_out, g_events, static_cast<GpuFlush>(g_stream.gpu_flush));
  // Names defined after the rings are read: whatever the events just encoded refer to (a domain,
  // a counter) was published before those events were written, so it is in this round.
  DrainMetadata();
  DefineStrings(g_out);
  ReportProcessDrops();
  ReportNoticedLosses();
  DrainNameCounts(!yield);
  if (g_events.used >= (64 << 10)) {
    // A busy round's events are written from the buffer they were encoded in, after the
    // blocks they refer to, instead of being copied behind them.
    FlushBlocks();
    std::swap(g_out, g_events);
    FlushBlocks();
    std::swap(g_out, g_events);
  } else {
    stream::PutBytes(g_out, g_events.data, g_events.used);
  }
  AppendClock();
  FlushBlocks();
  // The whole round is cut back when a write of it fails, the events written before included.
  if (g_stream.write_failed) g_stream.unwritten_events += g_round_events;
  g_stream.in_round = false;
  return fullest;
}

void ResetDrainState() {
  g_out.used = g_events.used = g_block.used = 0;
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
