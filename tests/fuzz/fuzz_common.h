// What every fuzz target does with a trace that loaded: every analysis a user can ask for (the
// operator table by name, shapes and stack, the memory timeline, HTA's device-time analyses,
// nsys' reports, PyProf's kernel table, HTA's TraceDiff of the trace against itself, the
// torch.compile analyses, collectives and the cross-rank view of the ranks). A reader or
// an analysis that crashes, hangs or leaks on what another reader accepted is a bug either way.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "engine/analysis/averages_table.h"
#include "engine/analysis/compile_analysis.h"
#include "engine/analysis/cpu_samples.h"
#include "engine/analysis/function_events.h"
#include "engine/analysis/gpu_analyses.h"
#include "engine/analysis/gpu_events.h"
#include "engine/analysis/kernel_table.h"
#include "engine/analysis/key_averages.h"
#include "engine/analysis/memory_timeline.h"
#include "engine/analysis/nsys_stats.h"
#include "engine/analysis/ranks.h"
#include "engine/analysis/trace_diff.h"
#include "engine/io/input_source.h"
#include "engine/load/trace_loader.h"
#include "engine/trace/trace.h"

namespace profsh::fuzz {

// Every table of `trace` (sorted by total CPU time, no row limit), one after the other.
inline std::string Tables(const Trace& trace) {
  std::shared_ptr<const FunctionEvents> events = BuildFunctionEvents(trace);
  std::string out;
  TableOptions options;
  options.sort_by = "cpu_time_total";
  options.row_limit = -1;
  for (const auto& [shapes, stack] :
       {std::pair{false, 0}, std::pair{true, 0}, std::pair{false, 5}}) {
    KeyAverages averages = ComputeKeyAverages(events, shapes, stack);
    auto table = BuildAveragesTable(averages, options);
    out += table.ok() ? table.value() : "error: " + table.error().message;
  }
  return out;
}

// The device-time analyses, with HTA's last-step rule on and off.
inline void AnalyseDevice(const Trace& trace) {
  for (bool include_last_step : {false, true}) {
    GpuEventOptions options;
    options.include_last_profiler_step = include_last_step;
    const GpuEvents g = BuildGpuEvents(trace, options);
    (void)TemporalBreakdown(g, /*by_step=*/true);
    (void)CommCompOverlap(g);
    (void)ComputeKernelBreakdown(g, KernelBreakdownOptions{}, trace);
    (void)AnnotationBreakdown(g, trace, AnnotationBreakdownOptions{});
    AnnotationBreakdownOptions cpu_annotations;
    cpu_annotations.use_gpu_annotation = false;
    cpu_annotations.num_annotations = 2;
    cpu_annotations.allowlist_patterns = std::vector<std::string>{"Step", ""};
    (void)AnnotationBreakdown(g, trace, cpu_annotations);
    (void)ComputeIdleTimeBreakdown(g, IdleTimeOptions{});
    (void)ComputeLaunchStats(g, LaunchStatsOptions{}, trace);
    (void)QueueLengthSummary(g, trace);
    (void)CounterSeries(g, trace);
  }
  for (const std::string& report : NsysReportNames()) (void)NsysStatsReport(trace, report);
  (void)DiffTraces(trace, trace, TraceDiffOptions{});
  (void)KernelTable(trace);
}

// What torch.compile did, and the ranks' collectives and cross-rank view.
inline void AnalyseCompileAndRanks(const Trace& trace) {
  (void)AnalyzeCompile(trace, *BuildFunctionEvents(trace));
  (void)AnalyzeCollectives(trace);
  (void)CrossRankView(TemporalBreakdown(BuildGpuEvents(trace), /*by_step=*/true));
}

// The cpu activity's analyses: samples attributed to ranges, hotspots by every key.
inline void AnalyseSamples(const Trace& trace) {
  const CpuSamples samples = CollectCpuSamples(trace);
  (void)CountSamplesPerEvent(trace, *BuildFunctionEvents(trace));
  for (HotspotKey by : {HotspotKey::kFunction, HotspotKey::kModule, HotspotKey::kRange}) {
    uint64_t kept = 0;
    (void)ComputeHotspots(samples, HotspotOptions{by, ""}, &kept);
  }
}

inline void Analyse(const Trace& trace) {
  (void)Tables(trace);
  AnalyseSamples(trace);
  AnalyseCompileAndRanks(trace);
  (void)BuildMemoryTimeline(trace);
  AnalyseDevice(trace);
}

// A scratch file of this process (readers that detect gzip or folders need a path).
inline std::string ScratchPath(const char* what) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/profsh_fuzz_" + std::to_string(getpid()) + "_" + what;
}

inline void WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

// The input as a user hands a trace over: gzip goes through a file, as `profsh FILE` reads it.
inline Result<std::unique_ptr<Trace>> LoadInput(const uint8_t* data, size_t size) {
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
    const std::string path = ScratchPath("input.gz");
    WriteFile(path, data, size);
    auto trace = LoadTrace(path);
    std::remove(path.c_str());
    return trace;
  }
  auto input = MemoryInput("fuzz", std::string(reinterpret_cast<const char*>(data), size));
  return LoadTraceFrom(*input);
}

}  // namespace profsh::fuzz
