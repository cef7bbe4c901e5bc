// What a recording session held and what it lost, summed over its streams: the summary line
// of `profsh run`, the "profsh" metadata of the trace, and p.summary in Lua.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace profsh {

struct SessionSummary {
  uint64_t processes = 0;  // streams (process images)
  uint64_t threads = 0;
  uint64_t ranges = 0;  // push/pop, task and start/end ranges recorded
  uint64_t marks = 0;
  uint64_t operators = 0;      // PyTorch operators (part of ranges)
  uint64_t memory_events = 0;  // allocations and frees recorded
  int64_t memory_peak = 0;     // bytes, summed over processes
  int64_t memory_at_end = 0;   // bytes still allocated when the streams ended
  uint64_t counter_values = 0;
  uint64_t dropped_ranges = 0;  // not recorded: the thread's buffer was full
  uint64_t dropped_events = 0;
  uint64_t events_without_slot = 0;  // threads beyond the runtime's slot table
  uint64_t strings_refused = 0;
  uint64_t metadata_refused = 0;  // names of domains, counters, threads the runtime could not queue
  uint64_t events_after_close = 0;  // events after the process's final flush (late destructors)
  uint64_t late_events = 0;  // events that reached the reader after their window was handed over
  uint64_t unmatched_pops = 0;
  uint64_t unknown_range_ends = 0;
  uint64_t open_at_thread_exit = 0;  // ranges closed for the thread when it exited
  uint64_t open_at_end = 0;          // ranges still open when the stream ended
  uint64_t cut_streams = 0;          // streams without an end block (killed, or still running)
  uint64_t stream_bytes = 0;
  std::vector<std::string> notices;
};

}  // namespace profsh
