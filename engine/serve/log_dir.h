// The folder profsh serve shows, in one of two layouts (TraceNaming):
// - tensorboard_trace_handler's (profsh serve LOGDIR): every folder holding traces is a run
//   ("." for LOGDIR itself), each trace file is a worker's span
//   ({worker}.{span}.pt.trace.json[.gz]);
// - a run's windows (profsh run --serve): BASE.PID.N.{profsh,json,json.gz}, saved next to the
//   run's -o BASE while the job runs, in that folder alone; one run (BASE), the process as the
//   worker, the window as the span. The windows an earlier run with the same -o left there are
//   not this run's: those present when the run starts are left out unless written again.
// Scanned afresh on every index request, so traces a job writes meanwhile appear.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <map>
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
  std::string name;               // folder relative to LOGDIR (the window base for windows)
  std::vector<TraceFile> traces;  // by worker, then span (numbers in numeric order)
};

// True for the names profsh serve lists as traces in tensorboard_trace_handler's layout.
bool IsTraceFileName(const std::string& name);
// Splits such a trace file name into worker and span.
void SplitWorkerSpan(const std::string& name, std::string* worker, std::string* span);

class TraceNaming {
 public:
  static TraceNaming TensorBoard() { return TraceNaming(""); }
  // The windows of a run whose -o is BASE[.profsh|.json|.json.gz] (`base` without the folder).
  static TraceNaming RunWindows(std::string base) { return TraceNaming(std::move(base)); }

  // Whether LOGDIR's subfolders are searched (only in tensorboard_trace_handler's layout).
  bool recursive() const { return window_base_.empty(); }
  bool Matches(const std::string& file_name) const;
  // Worker and span of a name that Matches().
  void Split(const std::string& file_name, std::string* worker, std::string* span) const;
  // The run a trace in `folder` (relative, "" for LOGDIR) belongs to.
  std::string RunName(const std::string& folder) const;

  // Notes the windows in `folder` (LOGDIR) as they are now: those of an earlier run with the
  // same -o, which this run's listing leaves out. A file is told by its device, inode, size and
  // modification time, so that a window this run writes under the same name (a new file, as the
  // atomic writer makes it) is listed; no clock is compared, so a coarse or skewed file system
  // clock changes nothing. Returns how many were noted.
  size_t LeaveOutPresentWindows(const std::string& folder);
  // Whether a file that Matches() is one of those left out, `st` being its stat.
  bool LeftOut(const std::string& file_name, const struct stat& st) const;

 private:
  struct FileVersion {
    uint64_t device = 0, inode = 0;
    int64_t bytes = 0, modified_ns = 0;
    bool operator==(const FileVersion&) const = default;
  };
  static FileVersion VersionOf(const struct stat& st);

  explicit TraceNaming(std::string window_base) : window_base_(std::move(window_base)) {}
  std::string window_base_;
  std::map<std::string, FileVersion> left_out_;  // by file name
};

// Runs sorted by name; folders it cannot read are skipped. Symbolic links are not followed.
std::vector<Run> ScanLogDir(const std::string& root, const TraceNaming& naming);

// The canonical path of `relative` when it names a trace file of `naming` inside `root` (itself
// canonical). 404 when there is no such file or it is not a trace served here, 403 when it leads
// outside (.., an absolute path, a symbolic link out).
struct Resolved {
  std::string path;
  int status = 200;
  std::string why;
};
Resolved ResolveUnder(const std::string& root, const std::string& relative,
                      const TraceNaming& naming);

}  // namespace profsh::serve
