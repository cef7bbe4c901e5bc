// What `profsh job map` shows while traces are summarized, locally or on Dask: "[###...] 7/16
// traces done, 1 failed" on standard error (redrawn on a terminal; in a log, a line at most every
// second and at the end), then each trace that failed, with its last message.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "repl/job_map_outputs.h"
#include "repl/job_map_plan.h"

namespace profsh::repl {

class MapProgress {
 public:
  MapProgress(const std::vector<MapTask>& tasks, int retries);

  // The first line, once the map has started.
  void Start() { Draw(false); }

  // Task `index` wrote its staging file or folder: its summaries named by their ranks
  // (SummaryOutputs), or failed.
  void Done(size_t index);
  void Failed(size_t index, const std::string& message);
  // The last progress line, the failures, and the exit status: 0 when every trace was
  // summarized, 1 when some were not. Staging files of unfinished tasks are removed.
  int Finish();

  size_t done() const { return done_; }  // traces
  // The summaries this map wrote (one per rank), in the order they were placed.
  const std::vector<std::string>& placed() const { return placed_; }
  size_t failed() const { return failures_.size(); }
  // The map could not go on (RunLocalMap, RunDaskMap failed): its staging files are removed.
  void Abandon() const { outputs_.RemoveStaging(); }

 private:
  void Draw(bool final);

  const std::vector<MapTask>& tasks_;
  SummaryOutputs outputs_;
  int retries_;
  size_t done_ = 0;
  std::vector<std::string> placed_;
  std::vector<std::pair<size_t, std::string>> failures_;
  bool tty_;
  std::chrono::steady_clock::time_point last_line_{};
  std::string last_text_;
};

}  // namespace profsh::repl
