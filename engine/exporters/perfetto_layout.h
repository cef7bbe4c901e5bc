// A trace as Perfetto trace processor lays out a Chrome JSON trace: which events are slices and
// their ids, the tracks they sit on, the thread and process rows, nesting (depth, parent) and
// flows. Perfetto parses the events in a sorted order (by ts; at equal ts a complete event before
// the others, the longer first; then file order) and hands out ids as it meets things, so the
// same walk here gives the same ids (docs/ANALYSIS.md, "SQL over a trace").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/trace/trace.h"

namespace profsh::sqlite {

inline constexpr int64_t kNone = -1;

struct PerfettoLayout {
  // upid = index. Row 0 is the placeholder Perfetto reserves for the idle process (pid 0).
  struct Process {
    Ident pid;
    uint32_t name = 0;  // string id, 0 when unnamed
  };
  // utid = index. Row 0 is the placeholder for the idle thread (tid 0 of upid 0).
  struct Thread {
    Ident tid;
    int64_t upid = kNone;
    bool is_main = false;
    uint32_t name = 0;
  };
  enum class TrackType { kThread, kProcessInstant, kGlobalInstant, kCounter };
  struct TrackRow {
    TrackType type = TrackType::kThread;
    int64_t utid = kNone;
    int64_t upid = kNone;
    std::string name;  // counters only ("NAME KEY")
  };
  struct Flow {
    int64_t slice_out = kNone;
    int64_t slice_in = kNone;
    uint64_t event = 0;  // the 'f' event
  };
  struct Counter {
    uint64_t event = 0;
    uint32_t key = 0;  // the argument's key (string id)
    int64_t track = kNone;
    double value = 0;
  };

  std::vector<Process> processes;
  std::vector<Thread> threads;
  std::vector<TrackRow>
      tracks;  // id = index; counter tracks last, as Perfetto adds them at the end
  std::vector<uint64_t> slice_event;  // slice id -> event index
  std::vector<int64_t> slice_track;   // slice id -> track id
  std::vector<int32_t> depth;         // per slice
  std::vector<int64_t> parent;        // per slice, kNone at depth 0
  std::vector<Flow> flows;            // id = index
  std::vector<Counter> counters;      // id = index
};

// Whether an event of this phase is a slice (complete events and instants).
bool IsSlicePhase(char phase);

PerfettoLayout BuildPerfettoLayout(const Trace& trace);

}  // namespace profsh::sqlite
