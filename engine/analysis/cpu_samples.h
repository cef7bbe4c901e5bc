// The cpu activity's samples (instant events of category "cpu_sample", engine/session's
// sample_reader) as analyses see them: each with its stack and the ranges open on its thread at
// its time (the innermost NVTX range, ITT task and PyTorch operator, and the whole nest), and
// the tables built from them: VTune's hotspots (bottom-up: self samples per function, module or
// range; top-down: samples with the item anywhere on the stack) and per-event counts for
// key_averages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/function_events.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

inline constexpr char kCpuSampleCategoryName[] = "cpu_sample";

struct CpuSample {
  int64_t ts_ns = 0;    // relative to the trace's origin
  uint32_t weight = 1;  // periods of the sampling rate it stands for (the timer fallback: >= 1)
  uint32_t track = 0;
  uint32_t stack = 0;     // string id: frames root first, ';'-separated
  uint32_t modules = 0;   // string id: each frame's module, same order
  uint32_t function = 0;  // string id: the innermost frame
  // String ids of the innermost open range of each kind on the sample's thread; 0: none.
  uint32_t nvtx = 0, itt = 0, op = 0;
  uint32_t range = 0;       // the innermost of any kind
  uint32_t range_path = 0;  // string id: every open range, outermost first, ';'-separated
};

struct CpuSamples {
  std::vector<CpuSample> samples;  // by track, then time
  StringPool strings;              // the strings the ids above name
};

// Whether `name` is one of the ';'-separated ranges of a range path.
bool RangePathHas(std::string_view path, std::string_view name);

// Every sample of the trace, attributed. Empty when the trace has none.
CpuSamples CollectCpuSamples(const Trace& trace);

// Per FunctionEvents event: samples taken while it was the innermost event open on its thread
// (self) and while it was open at all (total). Empty vectors when the trace has no samples.
struct EventSampleCounts {
  std::vector<uint32_t> self, total;
  bool empty() const { return self.empty(); }
};
EventSampleCounts CountSamplesPerEvent(const Trace& trace, const FunctionEvents& events);

enum class HotspotKey { kFunction, kModule, kRange };

struct HotspotRow {
  std::string name;
  std::string module;  // kFunction: the function's module
  uint64_t self = 0;   // samples with it innermost (bottom-up)
  uint64_t total = 0;  // samples with it anywhere on the stack (top-down), once per sample
  double self_pct = 0, total_pct = 0;
};

struct HotspotOptions {
  HotspotKey by = HotspotKey::kFunction;
  std::string range;  // keep only samples with a range of this name open (empty: all)
};

// Rows by self samples (then total), largest first.
Result<std::vector<HotspotRow>> ComputeHotspots(const CpuSamples& samples,
                                                const HotspotOptions& options, uint64_t* kept);

}  // namespace profsh
