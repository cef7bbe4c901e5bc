// Reads what the injected runtime wrote: a session folder (one stream per process image) or a
// single stream file, into one Trace. Ranges become complete events on their thread's track,
// NVTX start/end ranges lanes of their own, marks instants, ITT counters counter events; every
// process keeps its pid, and exec'd images of one pid share it.
//
// Nothing the runtime reported is dropped silently: buffer drops, pops without a push, ranges
// left open when a thread exited or the process was killed, streams cut short, all go into the
// trace's warnings and its "profsh" metadata, and into the summary.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/importers/importer.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

struct SessionSummary {
  uint64_t processes = 0;  // streams (process images)
  uint64_t threads = 0;
  uint64_t ranges = 0;  // push/pop, task and start/end ranges recorded
  uint64_t marks = 0;
  uint64_t steps = 0;          // step boundaries the collector saw (the step marker matched)
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

struct SessionLoad {
  std::unique_ptr<Trace> trace;
  SessionSummary summary;
};

// True when `path` is a folder holding at least one stream.
bool IsSessionFolder(const std::string& path);

// Reads a session folder or one stream file.
Result<SessionLoad> LoadSession(const std::string& path);

// The registry's importer for a single stream file.
std::unique_ptr<Importer> MakeStreamImporter();

}  // namespace profsh
