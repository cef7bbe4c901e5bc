// A whole recording: run the workload under the collector, then read its session into a trace.
// The session folder is removed once read, unless asked to keep it (or reading it failed: then
// the streams stay for a later profsh.load of the folder).
#pragma once

#include <memory>
#include <string>

#include "engine/recording/launcher.h"
#include "engine/session/live_session.h"
#include "engine/session/session_reader.h"

namespace profsh {

struct Recording {
  LaunchResult launch;
  SessionLoad session;
  bool session_kept = false;
};

// `ran`, when given, is set whenever the workload ran, also when its recording then could not be
// read: its exit status is the caller's to pass on either way.
Result<Recording> RecordWorkload(const LaunchOptions& options, bool keep_session,
                                 LaunchResult* ran = nullptr);

// A recording whose windows are handed over while the workload runs: `on_window` is called
// with each completed window's trace (and the session's control channel, to stop recording).
struct LiveRecording {
  LaunchResult launch;
  SessionSummary summary;
  std::vector<std::string> warnings;
  uint64_t windows = 0;
};
struct LiveCallbacks {
  std::function<void(const std::string& session)>
      started;                                // the session exists; the workload starts next
  std::function<void(int64_t pid)> launched;  // the workload has started
  std::function<void(ControlChannel&)> poll;  // about every 20 ms
  std::function<void(WindowTrace, ControlChannel&)> window;  // a completed window
  // About every 20 ms as well, after the windows were read: the live session itself (the
  // watchdog reads its processes' open ranges and last steps there).
  std::function<void(LiveSession&, ControlChannel&)> inspect;
};
Result<LiveRecording> RecordWorkloadLive(LaunchOptions options, bool keep_session,
                                         const LiveCallbacks& callbacks,
                                         LaunchResult* ran = nullptr);

// One line for people: processes, threads, ranges, and whatever was lost.
std::string DescribeRecording(const SessionSummary& summary);

}  // namespace profsh
