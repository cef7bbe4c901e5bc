#include "engine/analysis/tensorboard/recommendation_inputs.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "engine/analysis/model/device_properties.h"
#include "engine/analysis/model/event_model.h"
#include "engine/analysis/model/memory_records.h"
#include "engine/analysis/tensorboard/host_tree.h"
#include "engine/analysis/tensorboard/memory_summary.h"
#include "engine/analysis/tensorboard/tensor_core.h"

namespace profsh {

namespace {

// The plugin's EventParser flags: DataParallel.forward and DistributedDataParallel.forward
// ranges, nccl:* collectives (its NcclOpNameSet), and the devices that ran kernels, copies or
// sets (its used_devices).
void ReadParserFlags(const EventModel& model, PluginRuleInputs* in) {
  const Trace& trace = model.trace();
  const auto& templates = trace.events.templates();
  const EventRoles& roles = model.roles();
  for (size_t t = 0; t < templates.size(); ++t) {
    const EventRole role = roles.of_template(static_cast<uint32_t>(t)).role;
    if (role != EventRole::kCpuOp && role != EventRole::kAnnotation &&
        role != EventRole::kPythonFunction)
      continue;
    const std::string_view name = trace.str(templates[t].name);
    if (name == "DataParallel.forward") in->use_dp = true;
    if (name == "DistributedDataParallel.forward") in->use_ddp = true;
    for (std::string_view nccl : {"nccl:broadcast", "nccl:reduce", "nccl:all_reduce",
                                  "nccl:all_gather", "nccl:reduce_scatter"})
      if (name == nccl) in->uses_nccl = true;
  }
  const DeviceWorkIds& work = model.ids().device_work;
  for (size_t k = 0; k < work.size(); ++k) {
    if (model.role(work.event[k]).work == DeviceWorkKind::kSync || work.device[k] == kNoId)
      continue;
    in->used_devices.push_back(work.device[k]);
  }
  std::sort(in->used_devices.begin(), in->used_devices.end());
  in->used_devices.erase(std::unique(in->used_devices.begin(), in->used_devices.end()),
                         in->used_devices.end());
}

void ReadDevices(const Trace& trace, const GpuSummary& gpus, PluginRuleInputs* in) {
  const std::vector<DeviceProperties> props = ReadDeviceProperties(trace);
  for (size_t i = 0; i < props.size(); ++i) {
    const DeviceProperties& p = props[i];
    PluginRuleInputs::Gpu g;
    g.device = p.id.value_or(static_cast<int64_t>(i));
    g.compute_major = p.compute_major;
    g.compute_minor = p.compute_minor;
    g.total_memory_bytes = p.total_global_mem;
    in->device_properties.push_back(g);
  }
  if (!props.empty()) in->first_device_compute_major = props.front().compute_major;
  for (const GpuSummaryRow& row : gpus.rows) {
    PluginRuleInputs::Gpu g;
    g.device = row.device;
    g.utilization = row.utilization_pct / 100.0;
    in->gpus.push_back(g);
  }
}

// Each device's peak "Total Allocated" (memory_summary's peak_allocated; "GPU1" is CUDA device
// 1). Only when the plugin's rule can fire: it needs deviceProperties and [memory] records.
void ReadMemoryPeaks(const Trace& trace, PluginRuleInputs* in) {
  if (in->device_properties.empty() || MemoryRecordsOf(trace).empty()) return;
  const tensorboard::MemorySummary memory = tensorboard::BuildMemorySummary(trace);
  for (const tensorboard::DeviceMemorySummary& d : memory.devices) {
    PluginRuleInputs::Peak p;
    p.bytes = static_cast<int64_t>(d.peak_allocated);
    if (d.device.rfind("GPU", 0) == 0) {
      p.device_type = 1;
      p.device_id = std::stoll(d.device.substr(3));
    } else {
      p.device_type = 0;
      p.device_id = -1;
    }
    in->memory_peaks.push_back(p);
  }
}

}  // namespace

double TensorCoreEligibleKernelRatio(const EventModel& model) {
  const Trace& trace = model.trace();
  const tensorboard::HostTree tree = tensorboard::BuildHostTree(model);
  const size_t n = tree.nodes.size();
  std::unordered_map<uint32_t, uint32_t> node_of_event;
  for (uint32_t v = 0; v < n; ++v) node_of_event.emplace(tree.nodes[v].event, v);
  // The plugin gives a runtime call to the first range with its External id (event_parser.py's
  // externalid_to_runtime); External id 0 goes to the root, which is no operator.
  auto node_of_call = [&](uint32_t runtime) -> uint32_t {
    const int64_t external = model.ids().runtime.external[runtime];
    if (external == 0 || external == kNoId) return kNoIndex;
    for (uint32_t range : model.links().RangeCandidatesOfRuntime(runtime)) {
      auto it = node_of_event.find(model.ids().ranges.event[range]);
      if (it != node_of_event.end()) return it->second;
    }
    return kNoIndex;
  };
  std::vector<int64_t> kernel_ns(n, 0);
  std::vector<bool> launched_tc(n, false);
  const DeviceWorkIds& work = model.ids().device_work;
  for (size_t k = 0; k < work.size(); ++k) {
    const uint32_t e = work.event[k];
    if (model.role(e).work != DeviceWorkKind::kKernel) continue;
    const uint32_t r = FirstCandidate(model.links().RuntimeCandidates(k));
    if (r == kNoIndex) continue;
    const uint32_t node = node_of_call(r);
    if (node == kNoIndex) continue;
    const int64_t dur = trace.events.dur(e);
    kernel_ns[node] += dur;
    if (dur > 0 && PluginTensorCoreKernel(trace.str(trace.events.name(e))))
      launched_tc[node] = true;
  }
  // Eligibility rises from operators to their parent operators (node.py's fill_stats); then a
  // bottom one is eligible with no eligible node under it.
  std::vector<bool> eligible(n, false), eligible_below(n, false);
  std::vector<uint32_t> order;  // parents before children
  for (const tensorboard::HostThread& t : tree.threads)
    for (uint32_t root : t.roots) order.push_back(root);
  for (size_t i = 0; i < order.size(); ++i)
    for (uint32_t c : tree.nodes[order[i]].children) order.push_back(c);
  for (size_t i = order.size(); i-- > 0;) {
    const uint32_t v = order[i];
    const tensorboard::HostNode& node = tree.nodes[v];
    const bool is_operator = node.kind == tensorboard::HostNodeKind::kOperator;
    bool e = PluginTensorCoreEligibleOperator(trace.str(trace.events.name(node.event)));
    for (uint32_t c : node.children) {
      eligible_below[v] = eligible_below[v] || eligible[c] || eligible_below[c];
      if (is_operator && eligible[c]) e = true;
    }
    if (is_operator && launched_tc[v]) e = true;
    eligible[v] = e;
  }
  int64_t bottom_ns = 0, operators_ns = 0;
  for (size_t v = 0; v < n; ++v) {
    if (eligible[v] && !eligible_below[v]) bottom_ns += kernel_ns[v];
    if (tree.nodes[v].kind == tensorboard::HostNodeKind::kOperator) operators_ns += kernel_ns[v];
  }
  return operators_ns > 0 ? static_cast<double>(bottom_ns) / static_cast<double>(operators_ns) : 0;
}

PluginRuleInputs PluginRuleInputsFrom(const Trace& trace, const StepBreakdown& steps,
                                      const GpuSummary& gpus, const KernelSummary& kernels) {
  PluginRuleInputs in;
  const EventModel& model = ModelOf(trace);
  ReadParserFlags(model, &in);
  if (!steps.steps.empty()) {
    in.average_dataloader_us = steps.average.us[static_cast<size_t>(StepCategory::kDataLoader)];
    in.average_communication_us =
        steps.average.us[static_cast<size_t>(StepCategory::kCommunication)];
    in.average_total_us = steps.average.total_us;
  }
  ReadDevices(trace, gpus, &in);
  if (!kernels.rows.empty()) {
    in.tc_used_ratio = kernels.tensor_core_time_ratio;
    in.tc_eligible_ops_kernel_ratio = TensorCoreEligibleKernelRatio(model);
  }
  ReadMemoryPeaks(trace, &in);
  return in;
}

PluginRuleInputs PluginRuleInputsOf(const Trace& trace) {
  return PluginRuleInputsFrom(trace, ComputeStepBreakdown(trace), ComputeGpuSummary(trace),
                              ComputeKernelSummary(trace));
}

}  // namespace profsh
