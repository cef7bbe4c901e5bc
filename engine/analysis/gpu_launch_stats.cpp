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
  // (innermost operator around the call, call), for the calls that started device work; the
  // calls of one operator instance then lie together, in launch order.
  std::vector<std::pair<uint32_t, uint32_t>> op_calls;
  {
    auto enclosing = EnclosingRanges(ops, tree, calls);
    for (size_t c = 0; c < calls.size(); ++c)
      if (!enclosing[c].empty() && work_of.count(calls[c].correlation))
        op_calls.push_back({enclosing[c].back(), static_cast<uint32_t>(c)});
  }
  std::stable_sort(op_calls.begin(), op_calls.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // Grouped by (operator name, kernel names) as string ids: the texts are made once per group,
  // not once per operator instance.
  struct Group {
    int64_t count = 0;
    double delay = 0, runtime_delay = 0;
  };
  std::map<std::pair<uint32_t, std::vector<uint32_t>>, Group> groups;
  std::vector<uint32_t> sequence;
  for (size_t i = 0; i < op_calls.size();) {
    const uint32_t op = op_calls[i].first;
    sequence.clear();
    int64_t first_call_ts = INT64_MAX, first_delay = 0, first_runtime_delay = 0;
    for (; i < op_calls.size() && op_calls[i].first == op; ++i) {
      const Span& call = calls[op_calls[i].second];
      const size_t work = work_of.at(call.correlation);
      sequence.push_back(g.name[work]);
      if (call.ts < first_call_ts) {
        first_call_ts = call.ts;
        first_delay = call.ts - ops[op].ts;
        first_runtime_delay = g.ts[work] - call.ts;
      }
    }
    Group& grp = groups[{ops[op].name, sequence}];
    grp.count++;
    grp.delay += static_cast<double>(first_delay);
    grp.runtime_delay += static_cast<double>(first_runtime_delay);
  }
  struct Named {
    std::string op, sequence;
    Group group;
  };
  std::vector<Named> named;
  named.reserve(groups.size());
  for (auto& [key, grp] : groups) {
    std::string text;
    for (uint32_t name : key.second) {
      if (!text.empty()) text += " -> ";
      text += trace.str(name);
    }
    named.push_back({std::string(trace.str(key.first)), std::move(text), grp});
  }
  groups.clear();
  // Most frequent first; ties by operator name, then sequence (two id sequences with the same
  // text count as one).
  std::sort(named.begin(), named.end(), [](const Named& a, const Named& b) {
    return a.op != b.op ? a.op < b.op : a.sequence < b.sequence;
  });
  size_t out = 0;
  for (size_t i = 0; i < named.size(); ++i) {
    if (out > 0 && named[out - 1].op == named[i].op &&
        named[out - 1].sequence == named[i].sequence) {
      Group& into = named[out - 1].group;
      into.count += named[i].group.count;
      into.delay += named[i].group.delay;
      into.runtime_delay += named[i].group.runtime_delay;
    } else {
      if (out != i) named[out] = std::move(named[i]);
      ++out;
    }
  }
  named.resize(out);
  std::stable_sort(named.begin(), named.end(),
                   [](const Named& a, const Named& b) { return a.group.count > b.group.count; });
  rows.rows.reserve(named.size(), rows.columns.size());
  for (const Named& n : named) {
    double count = static_cast<double>(n.group.count);
    rows.rows.push_back({Cell::Text(n.op), Cell::Text(n.sequence), Cell::Int(n.group.count),
                         Cell::Double(RoundDecimal(n.group.delay / count, 3)),
                         Cell::Double(RoundDecimal(n.group.runtime_delay / count, 3))});
  }
  if (rows.rows.empty()) rows.notes.push_back("no kernel launched from within an aten:: operator");
  return rows;
}

}  // namespace

LaunchStats ComputeLaunchStats(const GpuEvents& g, const LaunchStatsOptions& options,
                               const Trace& trace) {
  LaunchStats out;
  out.launches.columns = {"rank", "correlation", "cpu_duration", "gpu_duration", "launch_delay"};
  out.launches.notes = g.notes;
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
      const auto row = static_cast<uint32_t>(out.launches.rows.size());
      if (row == 0) out.launches.rows.reserve(g.size(), out.launches.columns.size());
      if (cpu_duration <= options.runtime_cutoff && gpu_duration < cpu_duration)
        out.short_kernels.push_back(row);
      if (cpu_duration > options.runtime_cutoff) out.long_launches.push_back(row);
      if (delay > options.launch_delay_cutoff) out.long_delays.push_back(row);
      out.launches.rows.push_back({Cell::Int(g.rank), Cell::Int(g.runtime_correlation[r]),
                                   Cell::Int(cpu_duration), Cell::Int(gpu_duration),
                                   Cell::Int(delay)});
    }
  }
  out.aten_op_delays = AtenOpDelays(g, trace);
  if (out.launches.rows.empty())
    out.launches.notes.push_back("no kernel launches with device work in the trace");
  return out;
}

}  // namespace profsh
