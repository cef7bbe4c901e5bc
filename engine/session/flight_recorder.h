// The host side of a flight recording: every step of every process arrives decoded (a one-step
// window), is summarised, judged by the triggers, and kept in a ring bounded by steps (or
// seconds) and bytes; older steps are dropped. A dump joins kept steps into one trace with the
// reason it was asked for. Dump() is the one way out for every kind of dump (triggers, the
// watchdog, on-demand requests).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/flight/step_summary.h"
#include "engine/analysis/flight/step_triggers.h"
#include "engine/session/live_session.h"
#include "engine/session/watchdog.h"

namespace profsh {

struct FlightRecorderOptions {
  int64_t steps = 0;                  // keep each process's last N steps (0: by seconds)
  int64_t seconds = 0;                // keep the steps that ended in the last S seconds
  uint64_t max_bytes = 256ull << 20;  // the kept steps' decoded size, all processes together
  int64_t before = 5, after = 2;      // a trigger at step S dumps [S - before, S + after]
  size_t history = 100;               // summaries a trigger sees (the steps before the step)
};
inline constexpr uint64_t kDefaultFlightRecorderMb = 256;

// A dump: steps [first_step, last_step] of one process, or what of them was still kept.
struct FlightDump {
  WindowTrace window;  // info.index: the dump's number in this recording, from 0
  std::string reason;
  int64_t first_step = 0, last_step = 0;  // asked for
  uint64_t steps = 0;                     // held
  // When it was asked for (steady clock, ns; 0 for a dump made at once): the time from a trigger
  // to its saved trace is the wait for the steps after it plus the joining and saving.
  int64_t requested_at_ns = 0;
};

class FlightRecorder {
 public:
  explicit FlightRecorder(FlightRecorderOptions options);
  ~FlightRecorder();

  void AddTrigger(std::unique_ptr<StepTrigger> trigger);

  // A completed step (one window of a schedule that records every step), and the session's
  // dropped events so far (for the step's share). Returns the dumps it completed.
  std::vector<FlightDump> AddStep(WindowTrace step, uint64_t dropped_so_far);
  // The summary of the step AddStep last took.
  const StepSummary* last_summary() const { return last_summary_.get(); }

  // Dumps the kept steps [first_step, last_step] of process `pid` (0: of every process, each its
  // own trace) with `reason`, now.
  std::vector<FlightDump> Dump(int64_t pid, int64_t first_step, int64_t last_step,
                               const std::string& reason);
  // Every process's kept steps that overlap [begin_ns, end_ns], each process its own trace with
  // the span in its metadata ("span": [begin, end]): a dump in one process makes every process
  // dump the same time span. `hang` (the watchdog's) adds each process's open ranges as
  // events (hang_trace.h) and the report ("hang"); `except_pid` is left out (it dumped already).
  std::vector<FlightDump> DumpSpan(int64_t begin_ns, int64_t end_ns, const std::string& reason,
                                   const HangFinding* hang = nullptr, int64_t except_pid = 0);
  // [the oldest kept step's begin, the newest one's end] of `pid` (0: of every process).
  std::optional<std::pair<int64_t, int64_t>> KeptSpan(int64_t pid) const;
  // Dumps [step - before, step + after] of `pid` once step + after is in (or at Finish). A
  // request inside a span already asked for is merged into it.
  void RequestDump(int64_t pid, int64_t step, const std::string& reason);
  // The workload ended: the pending requests, with the steps there are.
  std::vector<FlightDump> Finish();

  // What went wrong that the user should hear about once (a trigger that failed).
  std::vector<std::string> TakeNotices();

  struct Stats {
    uint64_t steps_seen = 0, steps_dropped = 0, triggers_fired = 0, triggers_merged = 0, dumps = 0,
             trigger_errors = 0;
    uint64_t steps_kept = 0, bytes_kept = 0;            // now
    uint64_t peak_steps_kept = 0, peak_bytes_kept = 0;  // the most at once
  };
  const Stats& stats() const { return stats_; }
  const FlightRecorderOptions& options() const { return options_; }

 private:
  struct Kept;
  struct Process;
  struct Pending {
    int64_t pid, step, first, last;
    std::string reason;
    int64_t requested_at_ns;
  };
  Process& ProcessOf(int64_t pid);
  void Evict(Process& p);
  void EvictForBytes();
  std::vector<FlightDump> DumpProcess(Process& p, int64_t first, int64_t last,
                                      const std::string& reason);
  // One dump of `kept` (oldest first) and `extra`'s events; `extra_metadata`: more members of
  // the "profsh" metadata, each followed by ", ".
  std::vector<FlightDump> MakeDump(int64_t pid, const std::vector<const Kept*>& kept, int64_t first,
                                   int64_t last, const std::string& reason,
                                   const std::string& extra_metadata, std::unique_ptr<Trace> extra);
  bool Needed(const Process& p, int64_t step) const;

  FlightRecorderOptions options_;
  std::vector<std::unique_ptr<StepTrigger>> triggers_;
  std::vector<bool> trigger_disabled_;
  std::map<int64_t, std::unique_ptr<Process>> processes_;
  std::vector<Pending> pending_;
  std::vector<std::string> notices_;
  std::unique_ptr<StepSummary> last_summary_;
  uint64_t last_dropped_ = 0;
  Stats stats_;
};

}  // namespace profsh
