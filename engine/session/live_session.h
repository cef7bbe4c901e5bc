// A session read while its workload runs: every poll reads what the streams gained, and each
// window that completed (a schedule's active cycle, a capture range, an on-demand request)
// comes out as a Trace of its own. What was read is released, in memory and on disk (the
// streams' consumed bytes are punched out), so a job of any length stays flat.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/decoding/stream_decoder.h"
#include "engine/session/live_samples.h"

namespace profsh {

inline constexpr size_t kHangSamplesPerThread = 3;

struct WindowTrace {
  std::unique_ptr<Trace> trace;
  WindowInfo info;
  // The session's dropped events (ranges, other events, events without a slot) when the window
  // was handed over.
  uint64_t dropped_so_far = 0;
};

class LiveSession {
 public:
  // `gpu_wait_ms`: how long a window waits after its end for the GPU work launched in it.
  explicit LiveSession(std::string folder, int64_t gpu_wait_ms = kDefaultGpuWaitMs);
  ~LiveSession();

  // The cpu activity is on: each window waits for its CPU samples (live_samples.h).
  void SampleCpu();

  // Reads new data, at most a few MiB of each stream; returns the windows completed since the
  // last call, oldest first.
  Result<std::vector<WindowTrace>> Poll();
  // The last Poll left data unread (a backlog): another Poll reads on. Polling until it is
  // false hands a backlog's windows over a batch at a time instead of all at once.
  bool Behind() const { return behind_; }
  // The workload has ended: reads the rest and closes every stream's windows.
  Result<std::vector<WindowTrace>> Finish();

  // Every running process image's open ranges, last collectives, last step and (activity cpu)
  // last few samples of each thread, for a hang report (decoding/hang_watch.h); ascending pid.
  std::vector<ProcessHangState> HangStates();

  const SessionSummary& summary() const { return summary_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Stream;
  class Sink;
  Status ReadSamples(bool finished);
  // Reads and decodes up to `budget` bytes; *more: data is left for the next call.
  Status ReadStream(Stream& s, size_t budget, bool* more);
  Status Discover();
  std::vector<WindowTrace> StampDropped(std::vector<WindowTrace> windows) const;

  std::string folder_;
  int64_t gpu_wait_ms_;
  std::map<std::string, std::unique_ptr<Stream>> streams_;
  std::unique_ptr<Sink> sink_;
  std::unique_ptr<LiveSamples> samples_;
  SessionSummary summary_;
  std::vector<std::string> warnings_;
  bool behind_ = false;
};

}  // namespace profsh
