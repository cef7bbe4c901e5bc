// Kernel launch statistics: each launch's CPU duration, its device work's duration and the delay
// between them (HTA's get_cuda_kernel_launch_stats).
#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "engine/analysis/gpu_analyses.h"

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
  if (out.launches.rows.empty())
    out.launches.notes.push_back("no kernel launches with device work in the trace");
  return out;
}

}  // namespace profsh
