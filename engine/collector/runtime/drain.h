// The drain thread's side: reads every thread's ring, encodes its events compactly and appends
// blocks to the process's stream. Runs every few milliseconds in its own thread, and once more,
// synchronously, when the process image ends (exit, _exit, exec).
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>

namespace profsh::runtime {

struct StreamState {
  int fd = -1;
  char path[4096] = {};
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;  // one drain at a time
  bool write_failed = false;
  uint32_t drain_ms = 20;
  // Threads waiting in FinalFlush for the mutex: the drain thread's rounds stop early and do
  // not follow each other without a wait, so that a busy drain cannot keep the final flush out.
  std::atomic<int> final_flushes_waiting{0};
};
extern StreamState g_stream;

// Appends a block (header and payload) to the pending output; Flush writes it.
void AppendBlock(uint32_t type, const void* payload, uint32_t size);
// Writes what was appended. Returns false when the stream cannot be written.
bool FlushBlocks();

// One drain round: metadata, thread announcements, events, drop counts, strings, clock.
// Caller holds g_stream.mutex. Returns the largest fill (0..1) seen in a ring. The drain
// thread passes `yield` (true): its round stops at the next ring when a final flush waits.
double DrainOnce(bool yield = false);

// Forgets the drain thread's bookkeeping (after fork, the child starts a new stream).
void ResetDrainState();

// A clock pair (ticks, monotonic, realtime) block.
void AppendClock();

}  // namespace profsh::runtime
