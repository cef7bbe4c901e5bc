// Decodes one process's stream (engine/stream/stream_format.h) into traces, block by block,
// so that it works on a finished file and on one that is still being written.
//
// Windows: a stream recorded with a schedule, capture ranges or on-demand requests is cut into
// windows (the steps of one active cycle, one capture range, one request); without any, the
// whole stream is one window. Events belong to the window their start falls in; events in
// warmup steps or between windows are dropped; a range still open when its window ends is cut
// there. Each window's events go to the TraceBuilder the sink gives for it; the sink hears when
// a window is complete. Events are classified once the stream's drain rounds guarantee that no
// step boundary before them can still arrive (two rounds later), or at Finish().
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/session/session_reader.h"
#include "engine/trace/trace.h"
#include "engine/trace/trace_builder.h"
#include "engine/util/result.h"

namespace profsh {

struct WindowInfo {
  int64_t pid = 0;
  uint64_t index = 0;      // windows of this stream, from 0
  bool has_steps = false;  // a schedule or on-demand window
  int64_t first_step = 0, last_step = 0;
  int64_t begin_ns = 0, end_ns = 0;  // absolute (ns since the epoch)
  std::string reason;                // "schedule", "capture range", "on demand", "whole run"
  uint64_t request = 0;              // the on-demand request it answers (0: none)
};

class WindowSink {
 public:
  virtual ~WindowSink() = default;
  // Where a new window's events go, and the absolute time of that trace's ts = 0.
  virtual TraceBuilder& Open(const WindowInfo& window, int64_t* origin_ns) = 0;
  // The window is complete: nothing more will be added to its builder.
  virtual void Sealed(const WindowInfo& window) = 0;
};

struct StreamProcess {
  int64_t pid = 0, ppid = 0, start_ns = 0;
  uint32_t exec_index = 0, clock_kind = 0;
  std::string cmdline, exe, host, exec_path;
  std::vector<std::pair<std::string, std::string>> env;
  bool ended = false;  // kEnd, or kExec not followed by kExecFailed
  uint8_t end_reason = 0;
};

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

  // Whole-file loading: every step, capture and stop block is known before the events, so
  // events are classified as they are decoded (nothing is buffered). Call before Feed().
  Status PreloadBoundaries(std::string_view data);
  // ticks -> absolute ns. Without it the rate comes from the stream's own clock blocks.
  void SetClock(uint64_t ticks0, int64_t real0, double ns_per_tick);
  // Whether this image is the last of its pid (its command line then names the process).
  void SetLastImage(bool last);

  const StreamProcess& process() const;
  bool has_process() const;
  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::string path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace profsh
