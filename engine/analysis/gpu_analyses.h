// HTA's analyses of where device time goes (hta/analyzers/breakdown_analysis.py,
// communication_analysis.py, cuda_kernel_analysis.py), over GpuEvents. Each returns rows with
// HTA's columns; docs/ANALYSIS.md states the definitions and where profsh differs. A trace without
// device work gives empty rows and a note.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/analysis/gpu_events.h"

namespace profsh {

// rank, [step,] kernel_time, idle_time, compute_time, non_compute_time, idle_time_pctg,
// compute_time_pctg, non_compute_time_pctg, exposed_comm_time, exposed_memory_time (µs).
AnalysisRows TemporalBreakdown(const GpuEvents& g, bool by_step);

// rank, comp_comm_overlap_pctg.
AnalysisRows CommCompOverlap(const GpuEvents& g);

struct KernelBreakdownOptions {
  double duration_ratio = 0.8;
  int64_t num_kernels = 10;
  bool include_memory_kernels = true;
};
struct KernelBreakdown {
  AnalysisRows by_type;    // kernel_type, sum, percentage
  AnalysisRows by_kernel;  // name, kernel_type, rank, sum, max, min, mean, stddev
};
KernelBreakdown ComputeKernelBreakdown(const GpuEvents& g, const KernelBreakdownOptions& options,
                                       const Trace& trace);

struct AnnotationBreakdownOptions {
  double duration_ratio = 0.8;
  int64_t num_annotations = 1000;
  // Names containing one of these texts (literally: HTA escapes them) never go into "others";
  // an empty list keeps every name (HTA's empty pattern matches all), no list none.
  std::optional<std::vector<std::string>> allowlist_patterns;
  bool use_gpu_annotation = true;  // gpu_user_annotation ranges; false: user_annotation (CPU)
};
// name, rank, sum, max, min, mean, stddev of the annotation ranges, per name.
AnalysisRows AnnotationBreakdown(const GpuEvents& g, const Trace& trace,
                                 const AnnotationBreakdownOptions& options);

struct IdleTimeOptions {
  int64_t consecutive_kernel_delay = 30;  // µs
  std::vector<int64_t> streams;           // empty: all
};
struct IdleTimeBreakdown {
  AnalysisRows breakdown;       // rank, stream, idle_category, idle_time, idle_time_ratio
  AnalysisRows interval_stats;  // rank, stream, idle_category, count, mean, std, min, 25%, ...
};
IdleTimeBreakdown ComputeIdleTimeBreakdown(const GpuEvents& g, const IdleTimeOptions& options);

struct LaunchStatsOptions {
  int64_t runtime_cutoff = 50;        // µs
  int64_t launch_delay_cutoff = 100;  // µs
  bool include_memory_events = true;
};
struct LaunchStats {
  AnalysisRows launches;  // rank, correlation, cpu_duration, gpu_duration, launch_delay
  // Rows of `launches` (indices), kept once:
  std::vector<uint32_t> short_kernels;  // cpu_duration <= runtime_cutoff and gpu < cpu_duration
  std::vector<uint32_t> long_launches;  // cpu_duration > runtime_cutoff
  std::vector<uint32_t> long_delays;    // launch_delay > launch_delay_cutoff
  // HTA's get_aten_op_kernels_and_delay: per (aten_op_name, kernel_sequence): occurrence_count,
  // avg_aten_op_launch_delay (op start to its first launch call), avg_runtime_delay (that call
  // to its kernel's start), µs, most frequent first.
  AnalysisRows aten_op_delays;
};
LaunchStats ComputeLaunchStats(const GpuEvents& g, const LaunchStatsOptions& options,
                               const Trace& trace);

// Queue length per stream (HTA's get_queue_length_time_series): +1 when a launch call
// (cudaLaunchKernel, cudaMemcpyAsync, hipLaunchKernel, ...) enqueues work, -1 when that work
// starts. The summary is pandas' describe() of the values at the changes per stream, plus the
// mean weighted by how long each value held (profsh's addition).
// rank, stream, count, mean, std, min, 25%, 50%, 75%, max, time_weighted_mean.
AnalysisRows QueueLengthSummary(const GpuEvents& g, const Trace& trace);
// Counter tracks: the queue length of each stream and the memory bandwidth of each copy kind
// (HTA's get_memory_bw_time_series: the sum of the running copies' GB/s). name, rank, stream,
// ts (µs), value; a value holds until the next point of the same name and stream.
AnalysisRows CounterSeries(const GpuEvents& g, const Trace& trace);

// Statistics of a group of durations as pandas' agg(["sum", "max", "min", "mean", "std"]).
struct DurationStats {
  int64_t sum = 0, max = 0, min = 0, count = 0;
  double mean = 0, stddev = 0;  // sample standard deviation, 0 for a single value
};
DurationStats SummarizeDurations(const std::vector<int64_t>& durations);
// pandas' Series.quantile (linear interpolation) of values in ascending order; 0 when empty.
double QuantileOfSorted(const std::vector<int64_t>& ascending, double q);

}  // namespace profsh
