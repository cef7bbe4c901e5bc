// The TensorBoard profiler plugin's module view (module_op.py at kineto 041e7ce): the nn.Module
// tree read from the python_function ranges' ids, and per module (name and module id) its
// occurrences, operators and host and device time. Nanoseconds here; docs/ANALYSIS.md
// ("TensorBoard views") defines each column and where profsh differs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/trace/trace.h"

namespace profsh::tensorboard {

struct ModuleStats {
  std::string name;  // without the "nn.Module: " prefix
  int64_t module_id = 0;
  int64_t occurrences = 0;
  int64_t operators = 0;  // operators called directly, summed over the occurrences
  int64_t host_duration = 0, self_host_duration = 0;
  int64_t device_duration = 0, self_device_duration = 0;
  double avg_duration = 0;  // device time per occurrence, or host time where it has none
  std::vector<ModuleStats> children;
};

struct ModuleSummary {
  std::vector<ModuleStats> roots;  // by name
};

// Empty where the trace has no nn.Module ranges with their ids.
ModuleSummary BuildModuleSummary(const Trace& trace);

// The tree in pre-order: depth, name, id, occurrences, operators, host_duration,
// self_host_duration, device_duration, self_device_duration, avg_duration (µs).
AnalysisRows ModuleSummaryRows(const ModuleSummary& summary);

}  // namespace profsh::tensorboard
