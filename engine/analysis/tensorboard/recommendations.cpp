// The plugin's rules (RunProfileData.analyze, _analyze_distributed_metrics, _analyze_gpu_metrics
// at kineto 041e7ce) over the figures of its views, and the rows of both rule sets.
#include "engine/analysis/tensorboard/recommendations.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "engine/analysis/tensorboard/recommendations_evidence.h"

namespace profsh {

namespace {

using recommendations::FormatTime;

std::string Percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", ratio * 100.0);
  return buf;
}

std::string Micros(double us) {
  return FormatTime(static_cast<int64_t>(us * 1000.0 + 0.5));
}

Recommendation Plugin(const char* rule, std::string text, std::string evidence, int64_t ns) {
  return Recommendation{rule, "plugin", std::move(text), std::move(evidence), ns};
}

// A share of the average step (the plugin divides by the "Total" column of its average row).
std::optional<double> StepShare(const std::optional<double>& part,
                                const std::optional<double>& total) {
  if (!part || !total || *total <= 0) return std::nullopt;
  return *part / *total;
}

}  // namespace

std::vector<Recommendation> PluginRecommendations(const PluginRuleInputs& in) {
  std::vector<Recommendation> out;
  if (auto share = StepShare(in.average_dataloader_us, in.average_total_us); share && *share > 0.05)
    out.push_back(Plugin(
        "dataloader",
        "This run has high time cost on input data loading. " + Percent(*share) +
            " of the step time is in DataLoader. You could try to set num_workers on "
            "DataLoader's construction and enable multi-processes on data loading "
            "(https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading).",
        "DataLoader ranges (enumerate(DataLoader)#...): " + Micros(*in.average_dataloader_us) +
            " of the average step's " + Micros(*in.average_total_us),
        static_cast<int64_t>(*in.average_dataloader_us * 1000.0 + 0.5)));

  if (in.use_dp && in.used_devices.size() > 1)
    out.push_back(Plugin("data_parallel",
                         "It is recommended to use DistributedDataParallel instead of "
                         "DataParallel to do multi-GPU training "
                         "(https://pytorch.org/docs/stable/notes/cuda.html#cuda-nn-ddp-instead).",
                         "DataParallel.forward ranges, with work on " +
                             std::to_string(in.used_devices.size()) + " devices",
                         0));

  if (in.use_ddp && !in.uses_nccl) {
    for (const PluginRuleInputs::Gpu& g : in.device_properties) {
      if (!g.compute_major || !g.compute_minor) continue;
      // The plugin compares float("major.minor") with 3.5.
      const double capability =
          std::stod(std::to_string(*g.compute_major) + "." + std::to_string(*g.compute_minor));
      if (capability >= 3.5) {
        out.push_back(Plugin("ddp_backend",
                             "Nccl backend is currently the fastest and highly recommended "
                             "backend when using DDP for training.",
                             "DistributedDataParallel.forward ranges and no nccl:* collective; "
                             "GPU " +
                                 std::to_string(g.device) + " has compute capability " +
                                 std::to_string(*g.compute_major) + "." +
                                 std::to_string(*g.compute_minor),
                             0));
        break;
      }
    }
  }

  if (auto share = StepShare(in.average_communication_us, in.average_total_us);
      share && *share > 0.1)
    out.push_back(Plugin(
        "communication",
        "This run has high time cost on communication. " + Percent(*share) +
            " of the step time is in communication. You could try Gradient Compression "
            "(https://pytorch.org/docs/stable/ddp_comm_hooks.html) or Gradient Accumulation or "
            "increase the batch size. Note: Gradient accumulation will increase global effective "
            "batch size, which may hurt model convergence and accuracy. For such case, you may "
            "want to evaluate LAMB optimizer "
            "(https://nvidia.github.io/apex/optimizers.html#apex.optimizers.FusedLAMB).",
        "communication kernels: " + Micros(*in.average_communication_us) +
            " of the average step's " + Micros(*in.average_total_us),
        static_cast<int64_t>(*in.average_communication_us * 1000.0 + 0.5)));

  std::vector<const PluginRuleInputs::Gpu*> low;
  for (const PluginRuleInputs::Gpu& g : in.gpus)
    if (g.utilization && *g.utilization < 0.5) low.push_back(&g);
  if (!low.empty()) {
    std::string list, evidence;
    for (size_t i = 0; i < low.size(); ++i) {
      list += (i == 0 ? "" : i + 1 == low.size() ? " and " : ", ") + std::to_string(low[i]->device);
      evidence += (i ? ", " : "") + std::string("GPU ") + std::to_string(low[i]->device) + " " +
                  Percent(*low[i]->utilization) + " busy";
    }
    out.push_back(Plugin("low_gpu_utilization",
                         "GPU " + list + (low.size() == 1 ? " has" : " have") +
                             " low utilization. You could try to increase batch size to improve. "
                             "Note: Increasing batch size may affect the speed and stability of "
                             "model convergence.",
                         evidence + " (below 50%)", 0));
  }

  if (in.first_device_compute_major && *in.first_device_compute_major >= 7 && in.tc_used_ratio &&
      *in.tc_used_ratio == 0.0 && in.tc_eligible_ops_kernel_ratio > 0.0) {
    const long percent = std::lround(in.tc_eligible_ops_kernel_ratio * 100.0);
    out.push_back(Plugin("tensor_cores",
                         "Kernels with " + std::to_string(percent) +
                             "% time are launched by Tensor Cores eligible operators. You could "
                             "enable Automatic Mixed Precision "
                             "(https://pytorch.org/docs/stable/amp.html) to speedup by using FP16.",
                         "no kernel used tensor cores; eligible operators launched " +
                             Percent(in.tc_eligible_ops_kernel_ratio) + " of the kernel time",
                         0));
  }

  // The plugin skips device type -1, which no record has (the CPU is type 0), and looks a peak's
  // device up by position in deviceProperties: the CPU's peak (device id -1) meets the last GPU's
  // memory. profsh compares each GPU's peak with the entry of that GPU's id.
  if (!in.device_properties.empty()) {
    for (const PluginRuleInputs::Peak& p : in.memory_peaks) {
      if (p.device_type != 1) continue;
      const PluginRuleInputs::Gpu* props = nullptr;
      for (const PluginRuleInputs::Gpu& g : in.device_properties)
        if (g.device == p.device_id) props = &g;
      if (props == nullptr || !props->total_memory_bytes) continue;
      const double total = static_cast<double>(*props->total_memory_bytes);
      if (static_cast<double>(p.bytes) <= total * 0.9) continue;
      char gb[32];
      std::snprintf(gb, sizeof gb, "%.1f", total / 1024 / 1024 / 1024);
      out.push_back(Plugin(
          "memory_peak",
          "Device memory usage is at the limit of device memory capacity (" +
              Percent(static_cast<double>(p.bytes) / total) + " of " + gb + "GB on GPU" +
              std::to_string(p.device_id) +
              "). To get better value of your GPU or to use larger batch size for training, please "
              "refer to Gradient Checkpoint (https://pytorch.org/docs/stable/checkpoint.html) or "
              "Automatic Mixed Precision (https://pytorch.org/docs/stable/amp.html).",
          "peak allocated " + std::to_string(p.bytes) + " bytes of " +
              std::to_string(*props->total_memory_bytes) + " on GPU " + std::to_string(p.device_id),
          0));
      break;
    }
  }
  return out;
}

AnalysisRows RecommendationRows(const Trace& trace, const RecommendationOptions& options,
                                const PluginRuleInputs* plugin) {
  AnalysisRows rows;
  rows.columns = {"rule", "source", "text", "evidence", "time_at_stake"};
  std::vector<Recommendation> all;
  if (plugin != nullptr) {
    all = PluginRecommendations(*plugin);
  } else {
    rows.notes.push_back("the plugin's rules need its views' figures; only profsh's rules ran");
  }
  for (Recommendation& r : ProfshRecommendations(trace, options)) all.push_back(std::move(r));
  for (const Recommendation& r : all)
    rows.rows.push_back({Cell::Text(r.rule), Cell::Text(r.source), Cell::Text(r.text),
                         Cell::Text(r.evidence),
                         Cell::Fixed(static_cast<double>(r.time_at_stake_ns) / 1000.0, 3)});
  if (all.empty()) rows.notes.push_back("no rule fired");
  return rows;
}

}  // namespace profsh
