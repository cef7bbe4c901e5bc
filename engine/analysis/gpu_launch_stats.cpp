// Kernel launch statistics: each launch's CPU duration, its device work's duration and the delay
// between them (HTA's get_cuda_kernel_launch_stats).
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/analysis/gpu_analyses.h"
#include "engine/analysis/range_nesting.h"

namespace profsh {

namespace {

// HTA's launch calls, and the HIP ones that do the same on ROCm (HTA lists only CUDA's and MTIA's).
bool IsKernelLaunch(std::string_view name) {
  for (std::string_view launch : {"cudaLaunchKernel", "cudaLaunchKernelExC",
                                  "runFunction - job_prep_and_submit_for_execution",
                                  "hipLaunchKernel", "hipExtLaunchKernel", "hipModuleLaunchKernel"})
    if (name == launch) return true;
  return false;
}
bool IsMemoryLaunch(std::string_view name) {
  for (std::string_view launch :
       {"cudaMemcpyAsync", "cudaMemsetAsync", "hipMemcpyAsync", "hipMemsetAsync"})
    if (name == launch) return true;
  return false;
}

// HTA's KERNEL_LAUNCH_CATEGORY_PATTERN: (cuda.*LaunchKernel)|(cuLaunchKernel)|(^runFunction),
// matched at the start of the name.
bool IsLaunchCall(std::string_view name) {
  if (name.rfind("cuLaunchKernel", 0) == 0 || name.rfind("runFunction", 0) == 0) return true;
  return name.rfind("cuda", 0) == 0 && name.find("LaunchKernel") != std::string_view::npos;
}

// Per ATen operator instance, the kernels its launch calls started, in launch order.
AnalysisRows AtenOpDelays(const GpuEvents& g, const Trace& trace) {
  AnalysisRows rows;
  rows.columns = {"aten_op_name", "kernel_sequence", "occurrence_count", "avg_aten_op_launch_delay",
                  "avg_runtime_delay"};
  std::vector<Span> ops, calls;
  for (size_t a = 0; a < g.aten_ts.size(); ++a)
    ops.push_back({g.aten_ts[a], g.aten_end[a], g.aten_name[a], g.aten_track[a]});
  std::vector<uint32_t> call_runtime;
  for (size_t r = 0; r < g.runtime_ts.size(); ++r) {
    if (!g.RuntimeKept(r) || !IsLaunchCall(trace.str(g.runtime_name[r]))) continue;
    calls.push_back({g.runtime_ts[r], g.runtime_end[r], g.runtime_name[r], g.runtime_track[r],
                     g.runtime_correlation[r]});
    call_runtime.push_back(static_cast<uint32_t>(r));
  }
  std::unordered_map<int64_t, size_t> work_of;
  for (size_t k = 0; k < g.size(); ++k) work_of.try_emplace(g.correlation[k], k);
  RangeTree tree = NestRanges(ops);
  auto enclosing = EnclosingRanges(ops, tree, calls);
  struct Instance {
    std::string sequence;
    int64_t first_call_ts = INT64_MAX, first_delay = 0, first_runtime_delay = 0;
  };
  std::unordered_map<uint32_t, Instance> instances;  // by op index
  for (size_t c = 0; c < calls.size(); ++c) {
    auto work = work_of.find(calls[c].correlation);
    if (enclosing[c].empty() || work == work_of.end()) continue;
    uint32_t op = enclosing[c].back();  // the innermost operator around the call
    Instance& in = instances[op];
    if (!in.sequence.empty()) in.sequence += " -> ";
    in.sequence += trace.str(g.name[work->second]);
    if (calls[c].ts < in.first_call_ts) {
      in.first_call_ts = calls[c].ts;
      in.first_delay = calls[c].ts - ops[op].ts;
      in.first_runtime_delay = g.ts[work->second] - calls[c].ts;
    }
  }
  struct Group {
    int64_t count = 0;
    double delay = 0, runtime_delay = 0;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;
  for (const auto& [op, in] : instances) {
    Group& grp = groups[{std::string(trace.str(ops[op].name)), in.sequence}];
    grp.count++;
    grp.delay += static_cast<double>(in.first_delay);
    grp.runtime_delay += static_cast<double>(in.first_runtime_delay);
  }
  std::vector<std::pair<const std::pair<std::string, std::string>*, const Group*>> order;
  for (const auto& entry : groups) order.push_back({&entry.first, &entry.second});
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second->count > b.second->count; });
  for (const auto& [key, grp] : order) {
    double n = static_cast<double>(grp->count);
    rows.rows.push_back({Cell::Text(key->first), Cell::Text(key->second), Cell::Int(grp->count),
                         Cell::Double(RoundDecimal(grp->delay / n, 3)),
                         Cell::Double(RoundDecimal(grp->runtime_delay / n, 3))});
  }
  if (rows.rows.empty()) rows.notes.push_back("no kernel launched from within an aten:: operator");
  return rows;
}

}  // namespace

LaunchStats ComputeLaunchStats(const GpuEvents& g, const LaunchStatsOptions& options,
                               const Trace& trace) {
  LaunchStats out;
  for (AnalysisRows* rows :
       {&out.launches, &out.short_kernels, &out.long_launches, &out.long_delays}) {
    rows->columns = {"rank", "correlation", "cpu_duration", "gpu_duration", "launch_delay"};
    rows->notes = g.notes;
  }
  std::unordered_multimap<int64_t, size_t> device_work_of;
  for (size_t k = 0; k < g.size(); ++k) device_work_of.emplace(g.correlation[k], k);
  // Which runtime names launch work, decided once per name.
  std::unordered_map<uint32_t, bool> launches_work;
  for (size_t r = 0; r < g.runtime_ts.size(); ++r) {
    if (!g.RuntimeKept(r)) continue;
    auto [it, added] = launches_work.try_emplace(g.runtime_name[r], false);
    if (added) {
      std::string_view name = trace.str(g.runtime_name[r]);
      it->second = IsKernelLaunch(name) || (options.include_memory_events && IsMemoryLaunch(name));
    }
    if (!it->second) continue;
    const int64_t cpu_duration = g.runtime_end[r] - g.runtime_ts[r];
    auto [first, last] = device_work_of.equal_range(g.runtime_correlation[r]);
    std::vector<size_t> work;
    for (auto w = first; w != last; ++w) work.push_back(w->second);
    std::sort(work.begin(), work.end());
    for (size_t k : work) {
      const int64_t gpu_duration = g.end[k] - g.ts[k];
      const int64_t delay = std::max<int64_t>(0, g.ts[k] - g.runtime_ts[r] - cpu_duration);
      std::vector<Cell> row{Cell::Int(g.rank), Cell::Int(g.runtime_correlation[r]),
                            Cell::Int(cpu_duration), Cell::Int(gpu_duration), Cell::Int(delay)};
      if (cpu_duration <= options.runtime_cutoff && gpu_duration < cpu_duration)
        out.short_kernels.rows.push_back(row);
      if (cpu_duration > options.runtime_cutoff) out.long_launches.rows.push_back(row);
      if (delay > options.launch_delay_cutoff) out.long_delays.rows.push_back(row);
      out.launches.rows.push_back(std::move(row));
    }
  }
  out.aten_op_delays = AtenOpDelays(g, trace);
  if (out.launches.rows.empty())
    out.launches.notes.push_back("no kernel launches with device work in the trace");
  return out;
}

}  // namespace profsh
