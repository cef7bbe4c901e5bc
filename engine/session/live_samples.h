// The cpu activity in a live session (a schedule, capture ranges, on-demand requests): the
// samples files (profsh's perf_event_open file, the collector's timer file per process image)
// are read as they grow, and each window gets the samples of its process whose time lies in its
// span, unwound, symbolised and with the Python calls begun in the window spliced in.
//
// Both writers put a clock block after each round of writing (cpu_sampler.cpp,
// timer_sampler.cpp): every sample taken before its time is in the file before it. A file's
// blocks are replayed in time order up to there, and a sample is placed once its process's
// stream has said where its windows lie up to the sample's time
// (StreamDecoder::WindowsKnownUntilNs): into the window it falls in, or counted as outside every
// window and dropped. A window is handed over once its samples file has been placed past its end.
// What is held is the raw blocks of the last rounds (the writers' lag) and the open windows'
// placed samples (a shared stack each), never the run's.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/decoding/hang_watch.h"
#include "engine/decoding/session_summary.h"
#include "engine/decoding/window_tracker.h"
#include "engine/session/sample_reader.h"
#include "engine/trace/trace_builder.h"
#include "engine/util/result.h"

namespace profsh {

class LiveSamples {
 public:
  // Counts (cpu_samples, samples_lost, samples_outside_windows, late_events, ...) go to
  // `summary`, remarks to `warnings`.
  LiveSamples(std::string folder, SessionSummary& summary, std::vector<std::string>& warnings);
  ~LiveSamples();

  // Up to when the windows of a process are known (absolute ns; INT64_MAX once its stream has
  // ended); nullopt while no stream of that pid has been seen.
  using KnownUntil = std::function<std::optional<int64_t>(int64_t pid)>;

  void WindowOpened(const WindowInfo& window);
  // A Python call (absolute ns) of the window its start falls in.
  void PythonCall(int64_t pid, int64_t tid, int64_t begin_ns, int64_t end_ns,
                  std::string_view name);
  // The window is sealed: its end is known, and samples after it are not its.
  void WindowEnded(const WindowInfo& window);

  // Reads what the files gained and places what can be placed. `finished`: the workload and the
  // sampler are done, every stream is read: everything is placed.
  Status Read(const KnownUntil& known, bool finished);
  // Whether every sample of the window's span has been placed (or it has waited too long).
  bool Ready(const WindowInfo& window);
  // Adds the window's samples to `builder` (ts 0 at `origin_ns`) and forgets them.
  void Emit(const WindowInfo& window, TraceBuilder& builder, int64_t origin_ns);

  // The last `per_thread` samples of each thread of `pid` placed in its windows not yet handed
  // over, taken at or after `since_ns` (a watchdog's hang report).
  std::vector<StackSampleNow> LastSamples(int64_t pid, int64_t since_ns, size_t per_thread) const;

  // How the samples were taken, for the window's "sampling" metadata (empty until a file said).
  const std::string& method() const { return method_; }

 private:
  struct File;
  struct Held;
  Status Discover();
  Status ReadFile(File& f);
  Status Place(File& f, const KnownUntil& known, bool finished);
  void PlaceSample(const stream::SampleBlock& s, int64_t real_ns, File& f);
  Held* WindowAt(int64_t pid, int64_t ns);
  int64_t PlacedUntil(int64_t pid) const;

  std::string folder_;
  SessionSummary& summary_;
  std::vector<std::string>& warnings_;
  std::string method_;
  bool finished_ = false;
  std::map<std::string, std::unique_ptr<File>> files_;
  std::map<std::pair<int64_t, uint64_t>, std::unique_ptr<Held>> held_;  // (pid, window index)
  // Per pid: the span of its last window handed over (a sample placed later in it is late).
  std::map<int64_t, std::pair<int64_t, int64_t>> delivered_;
  // Per pid: its windows' known-until when it last moved, and when (a stream that stops moving
  // — a SIGKILL, a SIGSTOP — must not hold every other process's samples back).
  std::map<int64_t, std::pair<int64_t, std::chrono::steady_clock::time_point>> known_moved_;
  bool Stalled(int64_t pid, int64_t until);
};

}  // namespace profsh
