// A worker of the TensorBoard plugin's distributed view from a trace: its steps and busy time as
// the overview computes them (plugin_steps.h) and its collectives (distributed_summary.h).
#pragma once

#include <string>

#include "engine/analysis/tensorboard/distributed_summary.h"
#include "engine/trace/trace.h"

namespace profsh::tensorboard {

DistributedWorker DistributedWorkerOf(const Trace& trace, std::string name);

// The plugin's worker name of a trace file: its name up to ".pt.trace.json", less a
// ".<digits>" span (consts.py's WORKER_PATTERN); the file name itself otherwise.
std::string PluginWorkerName(std::string_view path);

}  // namespace profsh::tensorboard
