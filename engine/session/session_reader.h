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

#include "engine/decoding/session_summary.h"
#include "engine/importers/importer.h"
#include "engine/session/cut_streams.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

struct SessionLoad {
  std::unique_ptr<Trace> trace;
  SessionSummary summary;
};

// True when `path` is a folder holding at least one stream.
bool IsSessionFolder(const std::string& path);

// Reads a session folder or one stream file. `endings`: how the processes ended, where the
// caller watched them, for the warning that names the streams left without an end.
Result<SessionLoad> LoadSession(const std::string& path, const ProcessEndings& endings = {});

// The registry's importer for a single stream file.
std::unique_ptr<Importer> MakeStreamImporter();

}  // namespace profsh
