// The cpu activity's samples file (stream_format.h kSamplesFile) into the trace: each sample's
// stack unwound and symbolised (engine/symbols) in the address space its process had at that
// moment (mappings, forks and execs replayed in time order), and added as an instant event of
// category "cpu_sample" on its thread's track, named by its innermost function, with the whole
// stack (root first, ';'-separated, as folded stacks are) and the modules of its frames as
// arguments. Which ranges were open at a sample is decided from the trace by the analyses
// (engine/analysis/cpu_samples), so torch.profiler's merged events count too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/session/session_summary.h"
#include "engine/session/torch_fallback.h"
#include "engine/trace/trace_builder.h"
#include "engine/util/result.h"

namespace profsh {

inline constexpr char kCpuSampleCategory[] = "cpu_sample";

// Reads `path` (a samples file) into `builder`'s trace, whose ts 0 is `origin_ns` (realtime).
// Samples of a process recorded in windows only (a schedule) are kept inside its windows.
Status ReadCpuSamples(const std::string& path, int64_t origin_ns,
                      const std::vector<RecordingWindow>& windows, TraceBuilder& builder,
                      SessionSummary& summary, std::vector<std::string>& warnings);

}  // namespace profsh
