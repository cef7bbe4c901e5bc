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

struct DelayGroup {
  int64_t count = 0;
  double delay = 0, runtime_delay = 0;
};
// (operator name, names of the kernels its launch calls started, in launch order) as string ids.
using SequenceKey = std::pair<uint32_t, std::vector<uint32_t>>;

// Per ATen operator instance, the kernels its launch calls started, grouped by operator name and
// kernel sequence.
std::map<SequenceKey, DelayGroup> GroupAtenOpSequences(const GpuEvents& g, const Trace& trace) {
  std::vector<Span> ops, calls;
  for (size_t a = 0; a < g.aten_ts.size(); ++a)
    ops.push_back({g.aten_ts[a], g.aten_end[a], g.aten_name[a], g.aten_track[a]});
  for (size_t r = 0; r < g.runtime_ts.size(); ++r) {
    if (!g.RuntimeKept(r) || !IsLaunchCall(trace.str(g.runtime_name[r]))) continue;
    calls.push_back({g.runtime_ts[r], g.runtime_end[r], g.runtime_name[r], g.runtime_track[r],
                     g.runtime_correlation[r]});
  }
  std::unordered_map<int64_t, size_t> work_of;
  for (size_t k = 0; k < g.size(); ++k) work_of.try_emplace(g.correlation[k], k);
  // (innermost operator around the call, call), for the calls that started device work; the
  // calls of one operator instance then lie together, in launch order.
  std::vector<std::pair<uint32_t, uint32_t>> op_calls;
  {
    RangeTree tree = NestRanges(ops);
    auto enclosing = EnclosingRanges(ops, tree, calls);
    for (size_t c = 0; c < calls.size(); ++c)
      if (!enclosing[c].empty() && work_of.count(calls[c].correlation))
        op_calls.push_back({enclosing[c].back(), static_cast<uint32_t>(c)});
  }
  std::stable_sort(op_calls.begin(), op_calls.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<SequenceKey, DelayGroup> groups;
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
    DelayGroup& grp = groups[{ops[op].name, sequence}];
    grp.count++;
    grp.delay += static_cast<double>(first_delay);
    grp.runtime_delay += static_cast<double>(first_runtime_delay);
  }
  return groups;
}

constexpr std::string_view kSequenceSeparator = " -> ";

// Compares the texts two kernel sequences have once their names are joined with " -> ", without
// joining them: equal leading ids are skipped whole, the rest is compared byte by byte.
int CompareJoined(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                  const Trace& trace) {
  size_t first = 0;
  while (first < a.size() && first < b.size() && a[first] == b[first]) ++first;
  struct Cursor {
    const std::vector<uint32_t>& ids;
    const Trace& trace;
    size_t index;
    std::string_view rest;
    bool in_separator = false;
    Cursor(const std::vector<uint32_t>& i, const Trace& t, size_t from)
        : ids(i), trace(t), index(from) {
      if (index < ids.size()) rest = trace.str(ids[index]);
    }
    int Next() {  // the next byte, -1 at the end
      while (rest.empty()) {
        if (index >= ids.size()) return -1;
        if (in_separator) {
          in_separator = false;
          rest = trace.str(ids[index]);
        } else {
          if (++index >= ids.size()) return -1;
          in_separator = true;
          rest = kSequenceSeparator;
        }
      }
      const int byte = static_cast<unsigned char>(rest.front());
      rest.remove_prefix(1);
      return byte;
    }
  };
  Cursor x(a, trace, first), y(b, trace, first);
  for (;;) {
    const int cx = x.Next(), cy = y.Next();
    if (cx != cy) return cx < cy ? -1 : 1;
    if (cx < 0) return 0;
  }
}

AnalysisRows AtenOpDelays(const GpuEvents& g, const Trace& trace) {
  AnalysisRows rows;
  rows.columns = {"aten_op_name", "kernel_sequence", "occurrence_count", "avg_aten_op_launch_delay",
                  "avg_runtime_delay"};
  const std::map<SequenceKey, DelayGroup> groups = GroupAtenOpSequences(g, trace);
  // By operator name and sequence text (two id sequences with the same text count as one),
  // then most frequent first; the texts are made once, as the rows are written.
  struct Entry {
    const SequenceKey* key;
    DelayGroup group;
  };
  std::vector<Entry> entries;
  entries.reserve(groups.size());
  for (const auto& [key, grp] : groups) entries.push_back({&key, grp});
  auto compare = [&](const Entry& a, const Entry& b) {
    if (a.key->first != b.key->first) {
      std::string_view na = trace.str(a.key->first), nb = trace.str(b.key->first);
      if (na != nb) return na < nb ? -1 : 1;
    }
    return CompareJoined(a.key->second, b.key->second, trace);
  };
  std::sort(entries.begin(), entries.end(),
            [&](const Entry& a, const Entry& b) { return compare(a, b) < 0; });
  size_t kept = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (kept > 0 && compare(entries[kept - 1], entries[i]) == 0) {
      DelayGroup& into = entries[kept - 1].group;
      into.count += entries[i].group.count;
      into.delay += entries[i].group.delay;
      into.runtime_delay += entries[i].group.runtime_delay;
    } else {
      entries[kept++] = entries[i];
    }
  }
  entries.resize(kept);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.group.count > b.group.count; });
  size_t text_bytes = 0;
  for (const Entry& e : entries) {
    text_bytes += trace.str(e.key->first).size();
    for (uint32_t name : e.key->second)
      text_bytes += trace.str(name).size() + kSequenceSeparator.size();
  }
  rows.rows.reserve(entries.size(), rows.columns.size(), text_bytes);
  std::string text;
  for (const Entry& e : entries) {
    text.clear();
    for (uint32_t name : e.key->second) {
      if (!text.empty()) text += kSequenceSeparator;
      text += trace.str(name);
    }
    const double count = static_cast<double>(e.group.count);
    rows.rows.push_back({Cell::Text(std::string(trace.str(e.key->first))), Cell::Text(text),
                         Cell::Int(e.group.count),
                         Cell::Double(RoundDecimal(e.group.delay / count, 3)),
                         Cell::Double(RoundDecimal(e.group.runtime_delay / count, 3))});
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
  // (correlation, device work) in that order: a launch's work is a run of it, in trace order.
  std::vector<std::pair<int64_t, uint32_t>> device_work_of(g.size());
  for (size_t k = 0; k < g.size(); ++k) device_work_of[k] = {g.correlation[k], k};
  std::sort(device_work_of.begin(), device_work_of.end());
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
    const int64_t correlation = g.runtime_correlation[r];
    auto run = std::lower_bound(device_work_of.begin(), device_work_of.end(),
                                std::pair<int64_t, uint32_t>{correlation, 0});
    for (; run != device_work_of.end() && run->first == correlation; ++run) {
      const size_t k = run->second;
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
  device_work_of = {};
  out.aten_op_delays = AtenOpDelays(g, trace);
  if (out.launches.rows.empty())
    out.launches.notes.push_back("no kernel launches with device work in the trace");
  return out;
}

}  // namespace profsh
