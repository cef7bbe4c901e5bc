// What to change, read off a trace: the TensorBoard profiler plugin's recommendations (kineto
// 041e7ce, tb_plugin/torch_tb_profiler/profiler/data.py: RunProfileData.analyze) with its
// thresholds, and profsh's own rules where the trace shows the cause (pageable and synchronous
// copies, synchronizations inside steps, long GPU gaps, kernels shorter than their launch,
// recompiles). Each recommendation names the operators or kernels concerned and the time at
// stake. docs/ANALYSIS.md ("Recommendations") defines every rule; a server or a summarizer calls
// Recommendations() per request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/analysis/model/event_model.h"
#include "engine/trace/trace.h"

namespace profsh {

struct Recommendation {
  std::string rule;      // "dataloader", ..., "pageable_memcpy", ...
  std::string source;    // "plugin" or "profsh"
  std::string text;      // what to do, and why
  std::string evidence;  // the operators or kernels concerned, with their times
  int64_t time_at_stake_ns = 0;
};

struct RecommendationOptions {
  // gpu_gap: a gap between a device's work longer than this.
  int64_t gpu_gap_ns = 1'000'000;
  // short_kernels: at least this many kernels, and this share of the launched ones, ran shorter
  // on the device than their launch call on the host.
  int64_t min_short_kernels = 10;
  double short_kernel_share = 0.25;
  // Names listed in one evidence text, the longest first.
  size_t evidence_names = 5;
};

// The figures the plugin's rules read, from the plugin's other views (step_breakdown,
// gpu_summary, tensor-core ratios, memory_summary, the distributed view's flags). An absent
// figure keeps its rule from firing, as the plugin's does on a trace without it.
struct PluginRuleInputs {
  // The "Average Step Time" row (µs): dataloader, communication and total.
  std::optional<double> average_dataloader_us, average_communication_us, average_total_us;
  struct Gpu {
    int64_t device = 0;
    std::optional<double> utilization;  // 0..1 (the plugin's gpu_utilization)
    std::optional<int64_t> compute_major, compute_minor;
    std::optional<int64_t> total_memory_bytes;  // deviceProperties' totalGlobalMem
  };
  std::vector<Gpu> gpus;  // the devices with device work, ascending (the plugin's gpu_ids)
  // deviceProperties' first entry's computeMajor: the tensor_cores rule reads only this one.
  std::optional<int64_t> first_device_compute_major;
  std::vector<Gpu> device_properties;  // every deviceProperties entry, by its "id"
  // The share of kernel time in tensor-core kernels (absent on a trace without kernels) and the
  // share of kernel time launched by tensor-core eligible operators.
  std::optional<double> tc_used_ratio;
  double tc_eligible_ops_kernel_ratio = 0;
  // The peak of each device's "Total Allocated" ([memory] records): device type (0 CPU,
  // 1 CUDA), device id, bytes.
  struct Peak {
    int64_t device_type = 0, device_id = 0, bytes = 0;
  };
  std::vector<Peak> memory_peaks;
  bool use_dp = false, use_ddp = false;  // DataParallel.forward, DistributedDataParallel.forward
  bool uses_nccl = false;                // an nccl:* collective operator
  std::vector<int64_t> used_devices;     // devices that ran kernels, copies or sets
};

// The plugin's rules, in the plugin's order: dataloader, data_parallel, ddp_backend,
// communication, low_gpu_utilization, tensor_cores, memory_peak.
std::vector<Recommendation> PluginRecommendations(const PluginRuleInputs& in);

// profsh's own rules, in this order: pageable_memcpy, sync_memcpy, sync_in_step, gpu_gap,
// short_kernels, recompiles.
std::vector<Recommendation> ProfshRecommendations(const Trace& trace,
                                                  const RecommendationOptions& options);

// Both, as rows: rule, source, text, evidence, time_at_stake (µs). The plugin's rules need
// `plugin` (gathered from its views); without it only profsh's rules run, with a note.
AnalysisRows RecommendationRows(const Trace& trace, const RecommendationOptions& options,
                                const PluginRuleInputs* plugin);

}  // namespace profsh
