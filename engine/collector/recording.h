// A whole recording: run the workload under the collector, then read its session into a trace.
// The session folder is removed once read, unless asked to keep it (or reading it failed: then
// the streams stay for a later profsh.load of the folder).
#pragma once

#include <memory>
#include <string>

#include "engine/collector/launcher.h"
#include "engine/importers/session_reader.h"

namespace profsh {

struct Recording {
  LaunchResult launch;
  SessionLoad session;
  bool session_kept = false;
};

Result<Recording> RecordWorkload(const LaunchOptions& options, bool keep_session);

// One line for people: processes, threads, ranges, and whatever was lost.
std::string DescribeRecording(const SessionSummary& summary);

}  // namespace profsh
