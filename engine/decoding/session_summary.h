// What a recording counted, and the one table of those counts' names: the session reader's
// "profsh" metadata and warnings and the Lua binding's p.summary all iterate kSummaryCounts, so
// a count added here is reported everywhere under one name.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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
  // profile_memory left these process images out (not the command, Python or torch): their
  // count, and their executables' names, one per process image.
  uint64_t memory_processes_left_out = 0;
  std::vector<std::string> memory_left_out_programs;
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
  // The cuda activity: device work, calls and GPU memory events recorded, and what CUPTI lost.
  uint64_t gpu_kernels = 0, gpu_copies = 0, gpu_sets = 0, gpu_calls = 0, gpu_syncs = 0;
  uint64_t gpu_memory_events = 0;
  uint64_t gpu_calls_left_out = 0;     // queries Kineto leaves out (cuda_call_filter.h)
  uint64_t gpu_records_dropped = 0;    // CUPTI's count: no buffer was free for them
  uint64_t gpu_buffers_refused = 0;    // CUPTI asked for a buffer while the pool was empty
  uint64_t gpu_records_ignored = 0;    // records of kinds profsh does not keep
  uint64_t gpu_records_untimed = 0;    // device records whose start or end CUPTI did not know
  uint64_t gpu_records_unwritten = 0;  // GPU records the collector had no memory to write
  // Launches of a window whose device work had not come when it was handed over (the wait's
  // bound passed, or the process ended), and graph launches windows did not wait for.
  uint64_t gpu_launches_unreported = 0;
  uint64_t gpu_graph_launches_not_awaited = 0;
  std::vector<std::string> notices;
  // The range and mark names met most often while a step marker was set and had not matched
  // yet (summed over processes; each process reports its most frequent few): the names a
  // marker that never matched could have been.
  std::vector<std::pair<std::string, uint64_t>> names_before_first_step;
  void AddNameBeforeFirstStep(const std::string& name, uint64_t count) {
    for (auto& [known, n] : names_before_first_step) {
      if (known == name) {
        n += count;
        return;
      }
    }
    names_before_first_step.emplace_back(name, count);
  }
  // Which path recorded the PyTorch operators ("profsh operator source (...)", "torch.profiler
  // (fallback: why)"), one text per distinct path (the processes' operators-<pid>.txt notes).
  std::vector<std::string> operator_sources;
  // Activity cpu: how the samples were taken (empty: not sampled), and what was kept and lost.
  std::string sampling_method;
  uint64_t cpu_samples = 0;
  uint64_t samples_lost = 0;  // the kernel's buffer was full, or the collector's ring
  uint64_t sample_frames_unnamed = 0;
  uint64_t samples_with_python = 0;  // samples whose stack got Python frames (sample_reader.h)
  // Samples of a windowed process taken outside its windows (a schedule's wait, between capture
  // ranges): left out, as the process's events there are.
  uint64_t samples_outside_windows = 0;
};

// One count: its name for people and scripts, and, for what a session lost or had to repair,
// the warning that follows the number (such counts also go into the "profsh" metadata).
struct SummaryCount {
  constexpr SummaryCount(const char* key, uint64_t SessionSummary::*count,
                         const char* warning = nullptr, const char* warning_one = nullptr)
      : key(key), count(count), warning(warning), warning_one(warning_one) {}
  // Byte totals may be negative (frees of memory allocated before the recording).
  constexpr SummaryCount(const char* key, int64_t SessionSummary::*bytes)
      : key(key), bytes(bytes) {}

  int64_t Value(const SessionSummary& s) const {
    return count != nullptr ? static_cast<int64_t>(s.*count) : s.*bytes;
  }
  bool IsLoss() const { return warning != nullptr; }
  // The warning after a count of `n` (its own words for one).
  const char* Warning(uint64_t n) const { return n == 1 && warning_one ? warning_one : warning; }

  const char* key;
  uint64_t SessionSummary::*count = nullptr;
  int64_t SessionSummary::*bytes = nullptr;
  const char* warning = nullptr;      // after a count of 2 or more
  const char* warning_one = nullptr;  // after a count of 1
};

// Losses keep the order the metadata has always listed them in.
inline constexpr SummaryCount kSummaryCounts[] = {
    {"processes", &SessionSummary::processes},
    {"threads", &SessionSummary::threads},
    {"ranges", &SessionSummary::ranges},
    {"marks", &SessionSummary::marks},
    {"counter_values", &SessionSummary::counter_values},
    {"stream_bytes", &SessionSummary::stream_bytes},
    {"operators", &SessionSummary::operators},
    {"memory_events", &SessionSummary::memory_events},
    {"memory_peak", &SessionSummary::memory_peak},
    {"memory_at_end", &SessionSummary::memory_at_end},
    {"memory_processes_left_out", &SessionSummary::memory_processes_left_out},
    {"cpu_samples", &SessionSummary::cpu_samples},
    {"samples_with_python", &SessionSummary::samples_with_python},
    {"samples_outside_windows", &SessionSummary::samples_outside_windows},
    {"gpu_kernels", &SessionSummary::gpu_kernels},
    {"gpu_copies", &SessionSummary::gpu_copies},
    {"gpu_sets", &SessionSummary::gpu_sets},
    {"gpu_calls", &SessionSummary::gpu_calls},
    {"gpu_calls_left_out", &SessionSummary::gpu_calls_left_out},
    {"gpu_syncs", &SessionSummary::gpu_syncs},
    {"gpu_memory_events", &SessionSummary::gpu_memory_events},
    {"gpu_records_ignored", &SessionSummary::gpu_records_ignored},
    {"dropped_ranges", &SessionSummary::dropped_ranges,
     "ranges not recorded: a thread's buffer was full (raise PROFSH_BUFFER_KB)",
     "range not recorded: a thread's buffer was full (raise PROFSH_BUFFER_KB)"},
    {"dropped_events", &SessionSummary::dropped_events,
     "events not recorded: a thread's buffer was full (raise PROFSH_BUFFER_KB)",
     "event not recorded: a thread's buffer was full (raise PROFSH_BUFFER_KB)"},
    {"events_without_thread_slot", &SessionSummary::events_without_slot,
     "events of threads beyond the collector's 1024 thread slots were not recorded",
     "event of a thread beyond the collector's 1024 thread slots was not recorded"},
    {"strings_refused", &SessionSummary::strings_refused,
     "names were refused (the collector's string table was full)",
     "name was refused (the collector's string table was full)"},
    {"metadata_refused", &SessionSummary::metadata_refused,
     "domain, counter or thread names were refused (the collector's queue was full)",
     "domain, counter or thread name was refused (the collector's queue was full)"},
    {"events_after_close", &SessionSummary::events_after_close,
     "events came after their process had written its end (late destructors); not recorded",
     "event came after its process had written its end (a late destructor); not recorded"},
    {"late_events", &SessionSummary::late_events,
     "events reached profsh after their window had been handed over; left out",
     "event reached profsh after its window had been handed over; left out"},
    {"pops_without_push", &SessionSummary::unmatched_pops,
     "pops (or ends) without a matching push (or begin)",
     "pop (or end) without a matching push (or begin)"},
    {"ends_of_unknown_ranges", &SessionSummary::unknown_range_ends,
     "ends of range ids that were never started", "end of a range id that was never started"},
    {"ranges_open_at_thread_exit", &SessionSummary::open_at_thread_exit,
     "ranges were still open when their thread exited (ended there)",
     "range was still open when its thread exited (ended there)"},
    {"ranges_open_at_end", &SessionSummary::open_at_end,
     "ranges were still open when their process ended or was killed (ended at its last event)",
     "range was still open when its process ended or was killed (ended at its last event)"},
    {"streams_cut_short", &SessionSummary::cut_streams,
     "processes did not finish their stream (killed, or still running); events up to their last "
     "drain are kept",
     "process did not finish its stream (killed, or still running); events up to its last drain "
     "are kept"},
    {"samples_lost", &SessionSummary::samples_lost,
     "CPU samples were lost (the sample buffer was full)",
     "CPU sample was lost (the sample buffer was full)"},
    {"gpu_records_dropped", &SessionSummary::gpu_records_dropped,
     "GPU activity records were dropped by CUPTI: no buffer was free (raise "
     "PROFSH_CUPTI_BUFFERS or PROFSH_CUPTI_BUFFER_KB)",
     "GPU activity record was dropped by CUPTI: no buffer was free (raise PROFSH_CUPTI_BUFFERS "
     "or PROFSH_CUPTI_BUFFER_KB)"},
    {"gpu_records_untimed", &SessionSummary::gpu_records_untimed,
     "GPU kernels, copies, sets or CUPTI overheads had no valid start or end time "
     "(CUPTI_TIMESTAMP_UNKNOWN) and were skipped",
     "GPU kernel, copy, set or CUPTI overhead had no valid start or end time "
     "(CUPTI_TIMESTAMP_UNKNOWN) and was "
     "skipped"},
    {"gpu_records_unwritten", &SessionSummary::gpu_records_unwritten,
     "GPU activity records were lost: the collector had no memory to write them",
     "GPU activity record was lost: the collector had no memory to write it"},
    {"gpu_buffers_refused", &SessionSummary::gpu_buffers_refused,
     "requests of CUPTI for a buffer were refused: the pool was empty",
     "request of CUPTI for a buffer was refused: the pool was empty"},
    {"gpu_launches_unreported", &SessionSummary::gpu_launches_unreported,
     "GPU launches of a window never reported their kernel, copy or set before the window was "
     "handed over (the wait for GPU work timed out, or the process ended; raise gpu_wait_ms or "
     "--gpu-wait-ms)",
     "GPU launch of a window never reported its kernel, copy or set before the window was "
     "handed over (the wait for GPU work timed out, or the process ended; raise gpu_wait_ms or "
     "--gpu-wait-ms)"},
    {"gpu_graph_launches_not_awaited", &SessionSummary::gpu_graph_launches_not_awaited,
     "CUDA graph launches were not waited for: their windows hold the graph kernels that had "
     "reported when they were handed over",
     "CUDA graph launch was not waited for: its window holds the graph kernels that had "
     "reported when it was handed over"},
};

}  // namespace profsh
