// The folder profsh serve shows, laid out as tensorboard_trace_handler writes it: every folder
// holding traces is a run ("." for LOGDIR itself), each trace file is a worker's span
// ({worker}.{span}.pt.trace.json[.gz]). Scanned afresh on every index request, so traces a job
// writes meanwhile appear.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/util/result.h"

namespace profsh::serve {

struct TraceFile {
  std::string path;    // relative to LOGDIR, '/'-separated
  std::string worker;  // the name before the span (the whole stem when there is none)
  std::string span;    // the digits tensorboard_trace_handler puts before .pt.trace.json
  int64_t bytes = 0;
  int64_t modified_ns = 0;
};

struct Run {
  std::string name;               // folder relative to LOGDIR
  std::vector<TraceFile> traces;  // by worker, then span
};

// True for the names profsh serve lists as traces.
bool IsTraceFileName(const std::string& name);
// Splits a trace file name into worker and span.
void SplitWorkerSpan(const std::string& name, std::string* worker, std::string* span);

// Runs sorted by name; folders it cannot read are skipped. Symbolic links are not followed.
std::vector<Run> ScanLogDir(const std::string& root);

// The canonical path of `relative` when it names a regular file inside `root` (itself
// canonical). 404 when there is no such file, 403 when it leads outside (.., an absolute path,
// a symbolic link out).
struct Resolved {
  std::string path;
  int status = 200;
  std::string why;
};
Resolved ResolveUnder(const std::string& root, const std::string& relative);

}  // namespace profsh::serve
