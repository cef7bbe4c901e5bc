// torch's own profiler's traces in a session folder: where profsh's operator source could not be
// used, the start-up hook ran torch.profiler inside the workload
// (engine/torch_plugin/profsh_torch_fallback.py), which left per process a Kineto (or torch
// 1.13 legacy) JSON trace and an anchor file beside the streams. They are imported with the
// JSON importer and merged into the session's trace: timestamps put on the collector's realtime
// clock by the anchors (record_function ranges opened between two realtime readings), torch
// 1.13's thread numbers mapped to OS tids, and only what starts inside the collector's recording
// windows of that process kept. The profiler's own bookkeeping (its "Spans"/"Traces" lanes, the
// anchors) is left out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/decoding/session_summary.h"
#include "engine/trace/trace_builder.h"
#include "engine/util/result.h"

namespace profsh {

// One recording window of one process, in absolute ns.
struct RecordingWindow {
  int64_t pid = 0;
  int64_t begin_ns = 0, end_ns = 0;
  bool whole_run = false;  // the process recorded throughout (no schedule, capture, request)
};

// The distinct texts of the folder's operators-<pid>.txt notes (which path recorded the
// operators), sorted.
std::vector<std::string> OperatorSources(const std::string& folder);

// Whether the folder holds a torch.profiler trace.
bool HasTorchTraces(const std::string& folder);

// Merges every torch-trace-<pid>.json of `folder` into `to` (whose origin is `origin_ns`),
// counting operators and memory events into `summary`. A trace that cannot be read, or a process
// that started the fallback and left no trace (killed), is a warning: the streams stay readable.
void MergeTorchTraces(const std::string& folder, const std::vector<RecordingWindow>& windows,
                      int64_t origin_ns, TraceBuilder& to, SessionSummary& summary,
                      std::vector<std::string>& warnings);

}  // namespace profsh
