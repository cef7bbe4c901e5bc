// The drain thread's side: reads every thread's ring, encodes its events compactly and appends
// blocks to the process's stream. Runs every few milliseconds in its own thread, and once more,
// synchronously, when the process image ends (exit, _exit, exec).
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "engine/stream/stream_codec.h"

namespace profsh::runtime {

// A growable byte buffer on malloc (the drain thread is not on anyone's per-event path): the
// stream codec's sink. A failed allocation marks it failed; its blocks are then not written.
struct BlockBuffer {
  uint8_t* data = nullptr;
  size_t used = 0;
  size_t capacity = 0;
  bool failed = false;

  uint8_t* Room(size_t n) {
    if (used + n > capacity) {
      size_t want = capacity ? capacity * 2 : (1 << 20);
      while (want < used + n) want *= 2;
      auto* p = static_cast<uint8_t*>(realloc(data, want));
      if (p == nullptr) {
        failed = true;
        return nullptr;
      }
      data = p;
      capacity = want;
    }
    return data + used;
  }
  void Advance(size_t n) { used += n; }
  size_t size() const { return used; }
  uint8_t* At(size_t offset) { return data + offset; }
};

struct StreamState {
  int fd = -1;
  // The file `fd` was opened on: a workload that closes every descriptor and opens its own
  // files may hand our number to one of them, which the stream must never be written into.
  dev_t device = 0;
  ino_t inode = 0;
  char path[4096] = {};
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;  // one drain at a time
  bool write_failed = false;
  // Bytes of the stream written; where this drain round's writes began. A write that fails (a
  // full file system) is cut back to a block boundary: the round's, or the flush's outside one.
  uint64_t written = 0;
  uint64_t round_start = 0;
  bool in_round = false;
  int write_errno = 0;
  uint64_t unwritten_events = 0;  // encoded but not written since a write failed
  bool rounds_refused = false;    // a loss notice was written: no event round follows it
  uint32_t drain_ms = 20;
  // How the round asks CUPTI for its records (GpuFlush).
  uint8_t gpu_flush = 0;
  // Threads waiting in FinalFlush for the mutex: the drain thread's rounds stop early and do
  // not follow each other without a wait, so that a busy drain cannot keep the final flush out.
  std::atomic<int> final_flushes_waiting{0};
};
extern StreamState g_stream;

// A round's GPU part: kRound asks CUPTI for its full buffers; kForced also for those not full
// yet (at exit, from the atexit handler that runs before libcupti's destructors); kCompleteOnly
// calls no CUPTI function but its record parser, on buffers CUPTI already handed back (the
// final flush, which may run in a signal handler or after libcupti's destructors).
enum GpuFlush : uint8_t { kGpuFlushRound = 0, kGpuFlushForced = 1, kGpuFlushCompleteOnly = 2 };

// The pending output: blocks appended with stream::AppendBlockTo(PendingBlocks(), ...) are
// written by the next FlushBlocks(). Caller holds g_stream.mutex.
BlockBuffer& PendingBlocks();
// Writes what was appended. Returns false when the stream cannot be written.
bool FlushBlocks();

// After a failed write: one last try to say in the stream how many events were not written
// (the failed round's space is given back, so a short notice usually fits). The caller
// appends the end block behind it and flushes. Caller holds g_stream.mutex.
void AppendLossNotice();

// Takes `fd`, just opened on g_stream.path, as the stream's descriptor: moved to a high
// number (the lowest ones are those a workload that closed everything gets back first) and
// its file remembered.
void AdoptStreamFd(int fd);
// Whether g_stream.fd still refers to the stream's file (the workload may have closed it, and
// even reused its number).
bool StreamFdIsOurs();

// One drain round: metadata, thread announcements, events, drop counts, strings, clock.
// Caller holds g_stream.mutex. Returns the largest fill (0..1) seen in a ring. The drain
// thread passes `yield` (true): its round stops at the next ring when a final flush waits.
double DrainOnce(bool yield = false);

// Forgets the drain thread's bookkeeping (after fork, the child starts a new stream).
void ResetDrainState();

// A clock pair (ticks, monotonic, realtime) block.
void AppendClock();

}  // namespace profsh::runtime
