// What a watchdog reports of a process that stopped stepping (profsh run --watchdog): every
// thread's open ranges and operators, innermost first, and the last collectives the process
// entered. The stream decoder keeps it as events are classified, whether or not they fall in a
// window, so that it can be read while the workload runs.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/stream/stream_codec.h"

namespace profsh {

// A range, ITT task, operator or Python call still open on a thread.
struct OpenRangeNow {
  int64_t tid = 0;
  std::string thread;  // the thread's name, when it has one
  std::string name;
  std::string kind;  // "operator", "range", "task", "python"
  int64_t begin_ns = 0;
};

// A collective a process entered (collective_names.h says which names are collectives).
struct CollectiveEntered {
  int64_t tid = 0;
  std::string name;
  // Its sequence number: the NVTX range's integer payload where the program recorded one
  // (seq_recorded), else its position among this process's calls of that name, from 0.
  int64_t seq = 0;
  bool seq_recorded = false;
  int64_t begin_ns = 0;
  bool open = false;  // still running when asked
};

// A CPU sample of a thread taken during the quiet spell (activity cpu).
struct StackSampleNow {
  int64_t tid = 0;
  int64_t ns = 0;
  std::string stack;  // root first, ';'-separated
};

// One process's state for a hang report.
struct ProcessHangState {
  int64_t pid = 0;
  std::string command;
  uint64_t steps = 0;      // step boundaries seen
  int64_t last_step = -1;  // the last step's number (-1: none yet)
  int64_t last_step_ns = 0;
  std::vector<OpenRangeNow> open;              // per thread (ascending tid), innermost first
  std::vector<CollectiveEntered> collectives;  // the last few, oldest first
  std::vector<StackSampleNow> samples;  // the last few of each thread (ascending tid, oldest first)
};

// The last collectives of one stream, and the count of each name's calls.
class CollectiveLog {
 public:
  static constexpr size_t kKept = 8;
  void Entered(int64_t tid, std::string_view name, const stream::StreamEvent& e);
  struct Entry {
    int64_t tid;
    std::string name;
    int64_t seq;
    bool seq_recorded;
    uint64_t begin_ticks;
  };
  const std::deque<Entry>& last() const { return last_; }

 private:
  std::deque<Entry> last_;
  std::unordered_map<std::string, int64_t> calls_;
};

// "pid 12: no step for 5.0 s (last: step 41)" and the threads' open ranges, innermost first,
// and the collectives: the report profsh prints when its watchdog fires.
std::string HangReportText(const std::vector<ProcessHangState>& processes, int64_t now_ns);
// The same as a JSON object for a dump's "profsh" metadata ("hang": ...).
std::string HangReportJson(const std::vector<ProcessHangState>& processes, int64_t now_ns);

}  // namespace profsh
