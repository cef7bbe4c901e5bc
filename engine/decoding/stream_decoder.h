// Decodes one process's stream (engine/stream/stream_format.h) into traces, block by block,
// so that it works on a finished file and on one that is still being written. It dispatches
// blocks (stream_codec.h) to its parts: the clock (stream_clock.h), the windows
// (window_tracker.h), the matching of what opens and closes (range_matcher.h) and the emission
// of Kineto-shaped events (kineto_emitter.h).
//
// Events belong to the window their start falls in; events in warmup steps or between windows
// are dropped; a range still open when its window ends is cut there. Events are classified once
// the stream's drain rounds guarantee that no step boundary before them can still arrive (two
// rounds later), or at Finish().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/decoding/hang_watch.h"
#include "engine/decoding/kineto_emitter.h"
#include "engine/decoding/session_summary.h"
#include "engine/decoding/window_tracker.h"
#include "engine/stream/stream_codec.h"
#include "engine/util/result.h"

namespace profsh {

// How long a window waits, after its end, for the GPU work launched in it (stream time).
inline constexpr int64_t kDefaultGpuWaitMs = 10000;

struct StreamProcess {
  int64_t pid = 0, ppid = 0, start_ns = 0;
  uint32_t exec_index = 0, clock_kind = 0;
  std::string cmdline, exe, host, exec_path;
  std::vector<std::pair<std::string, std::string>> env;
  bool ended = false;  // kEnd, or kExec not followed by kExecFailed
  uint8_t end_reason = 0;
};

// A whole stream's process, clocks and end, read before its events (to fit the clocks of a
// session's streams together).
struct StreamOutline {
  StreamProcess process;
  std::vector<stream::ClockBlock> clocks;
  bool cut = false;  // it ends in a partial block (killed while writing)
  size_t cut_at = 0;
};
Result<StreamOutline> OutlineStream(const std::string& path, std::string_view data);

class StreamDecoder {
 public:
  StreamDecoder(std::string path, WindowSink& sink, SessionSummary& summary,
                std::vector<std::string>& warnings);
  ~StreamDecoder();

  // Bytes of the stream from `offset` on (the first call starts at 0, with the file header).
  // Consumes whole blocks and returns how many bytes it used; the rest (a block still being
  // written) is to be fed again with more data.
  Result<size_t> Feed(std::string_view data, size_t offset);
  // The stream is complete (or abandoned): classify everything, close what is open, seal.
  void Finish();

  // Whole-file loading, before Feed(): the process, configuration and every step, capture and
  // stop block are read first, so that events are classified as they are decoded (nothing is
  // buffered).
  Status Preload(std::string_view data);
  // ticks -> absolute ns. Without it the rate comes from the stream's own clock blocks.
  void SetClock(uint64_t ticks0, int64_t real0, double ns_per_tick);
  // Whether this image is the last of its pid (its command line then names the process).
  void SetLastImage(bool last);
  // This stream's place among the session's (0: the first); keeps GPU correlations and device
  // tracks of several processes apart (GpuEmitter::SetStreamIndex).
  void SetStreamIndex(uint32_t index);
  // How long a window waits after its end for launches whose device work has not reported.
  void SetGpuWait(int64_t ns);

  // No window boundary at or before this time (absolute ns) is still to come: what the stream
  // holds up to there is in its windows (INT64_MIN until the stream has said).
  int64_t WindowsKnownUntilNs() const;
  // What is open on each thread now, the last collectives entered and the last step: a
  // watchdog's report of a hang (hang_watch.h). Only events already classified are seen.
  ProcessHangState HangState();
  const StreamProcess& process() const;
  bool has_process() const;
  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::string path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace profsh
