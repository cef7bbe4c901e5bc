#include "engine/analysis/tensorboard/distributed_workers.h"

#include <algorithm>
#include <cctype>

#include "engine/analysis/tensorboard/plugin_events.h"
#include "engine/analysis/tensorboard/plugin_steps.h"

namespace profsh::tensorboard {

DistributedWorker DistributedWorkerOf(const Trace& trace, std::string name) {
  const EventModel& model = ModelOf(trace);
  const PluginSteps steps = ComputePluginSteps(model, ReadPluginEvents(model));
  DistributedWorker w;
  w.name = std::move(name);
  w.step_names = steps.names;
  w.steps = steps.steps;
  // overall_parser.py: computation is kernel time, or CPU operator time on a trace without
  // kernels.
  w.computation = steps.has(StepCategory::kKernel) ? steps.of(StepCategory::kKernel)
                                                   : steps.of(StepCategory::kCpuExec);
  w.communication = steps.of(StepCategory::kCommunication);
  w.ops = CommunicationOpsOf(model);
  return w;
}

std::string PluginWorkerName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const size_t suffix = file.find(".pt.trace.json");
  if (suffix == std::string_view::npos) return std::string(file);
  std::string_view worker = file.substr(0, suffix);
  const size_t dot = worker.find_last_of('.');
  if (dot != std::string_view::npos && dot + 1 < worker.size() &&
      std::all_of(worker.begin() + dot + 1, worker.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    worker = worker.substr(0, dot);
  return std::string(worker);
}

}  // namespace profsh::tensorboard
