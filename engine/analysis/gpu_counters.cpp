// Queue length and memory bandwidth over time (HTA's trace_counters.py).
#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_map>

#include "engine/analysis/gpu_analyses.h"

namespace profsh {

namespace {

// HTA's TraceSymbolTable.get_runtime_launch_events_mask.
bool EnqueuesWork(std::string_view name) {
  for (std::string_view launch :
       {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
        "cudaMemcpyAsync", "cudaMemsetAsync", "runFunction - job_prep_and_submit_for_execution",
        "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemsetAsync", "hipMemcpyAsync",
        "hipMemcpyWithStream"})
    if (name == launch) return true;
  return false;
}

struct Point {
  int64_t ts;
  int64_t value;
};

// Per (device, stream): the queue length after each change, in time order (a launch before a
// start at the same instant).
std::map<std::pair<int64_t, int64_t>, std::vector<Point>> QueueLengths(const GpuEvents& g,
                                                                       const Trace& trace) {
  std::unordered_map<uint32_t, bool> enqueues;
  struct Change {
    int64_t ts;
    int delta;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Change>> changes;
  for (size_t k = 0; k < g.size(); ++k) {
    uint32_t r = g.launch[k];
    if (r == GpuEvents::kNone || !g.RuntimeKept(r)) continue;
    auto [it, added] = enqueues.try_emplace(g.runtime_name[r], false);
    if (added) it->second = EnqueuesWork(trace.str(g.runtime_name[r]));
    if (!it->second) continue;
    auto& list = changes[{g.device[k], g.stream[k]}];
    list.push_back({g.runtime_ts[r], +1});
    list.push_back({g.ts[k], -1});
  }
  std::map<std::pair<int64_t, int64_t>, std::vector<Point>> out;
  for (auto& [key, list] : changes) {
    std::stable_sort(list.begin(), list.end(), [](const Change& a, const Change& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.delta > b.delta;
    });
    int64_t length = 0;
    auto& points = out[key];
    for (const Change& c : list) points.push_back({c.ts, length += c.delta});
  }
  return out;
}

// HTA's get_memory_kernel_type.
std::string CopyKind(std::string_view name) {
  if (name.rfind("Memset", 0) == 0) return "Memset";
  if (name.rfind("Memcpy", 0) != 0) return "Memcpy Unknown";
  return std::string(name.substr(0, 11));
}

}  // namespace

AnalysisRows QueueLengthSummary(const GpuEvents& g, const Trace& trace) {
  AnalysisRows rows;
  const bool per_device = g.Devices().size() > 1;
  rows.columns = {"rank"};
  if (per_device) rows.columns.push_back("device");
  for (const char* c :
       {"stream", "count", "mean", "std", "min", "25%", "50%", "75%", "max", "time_weighted_mean"})
    rows.columns.push_back(c);
  rows.notes = g.notes;
  for (const auto& [key, points] : QueueLengths(g, trace)) {
    std::vector<int64_t> values;
    for (const Point& p : points) values.push_back(p.value);
    DurationStats s = SummarizeDurations(values);
    std::sort(values.begin(), values.end());
    double weighted = 0;
    const int64_t span = points.back().ts - points.front().ts;
    for (size_t i = 0; i + 1 < points.size(); ++i)
      weighted += static_cast<double>(points[i].value) *
                  static_cast<double>(points[i + 1].ts - points[i].ts);
    std::vector<Cell> row{Cell::Int(g.rank)};
    if (per_device) row.push_back(Cell::Int(key.first));
    row.push_back(Cell::Int(key.second));
    row.push_back(Cell::Int(s.count));
    row.push_back(Cell::Double(RoundDecimal(s.mean, 2)));
    row.push_back(values.size() > 1 ? Cell::Double(RoundDecimal(s.stddev, 2)) : Cell::Empty());
    row.push_back(Cell::Int(s.min));
    for (double q : {0.25, 0.5, 0.75}) row.push_back(Cell::Double(QuantileOfSorted(values, q)));
    row.push_back(Cell::Int(s.max));
    row.push_back(span > 0 ? Cell::Double(RoundDecimal(weighted / static_cast<double>(span), 2))
                           : Cell::Empty());
    rows.rows.push_back(std::move(row));
  }
  if (rows.rows.empty()) rows.notes.push_back("no launch calls with device work in the trace");
  return rows;
}

AnalysisRows CounterSeries(const GpuEvents& g, const Trace& trace) {
  AnalysisRows rows;
  rows.columns = {"name", "rank", "device", "stream", "ts", "value"};
  rows.notes = g.notes;
  for (const auto& [key, points] : QueueLengths(g, trace))
    for (const Point& p : points)
      rows.rows.push_back({Cell::Text("queue_length"), Cell::Int(g.rank), Cell::Int(key.first),
                           Cell::Int(key.second), Cell::Int(p.ts), Cell::Int(p.value)});
  // Memory bandwidth per copy kind and device: +GB/s when a copy starts, - when it ends.
  struct Change {
    int64_t ts;
    double delta;
  };
  std::map<std::pair<std::string, int64_t>, std::vector<Change>> copies;
  for (size_t k = 0; k < g.size(); ++k) {
    if (g.type[k] != KernelType::kMemory) continue;
    auto& list = copies[{CopyKind(trace.str(g.name[k])), g.device[k]}];
    // HTA counts a zero-length copy as lasting 1 µs.
    int64_t end = g.end[k] > g.ts[k] ? g.end[k] : g.ts[k] + 1;
    list.push_back({g.ts[k], g.bandwidth[k]});
    list.push_back({end, -g.bandwidth[k]});
  }
  for (auto& [key, list] : copies) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Change& a, const Change& b) { return a.ts < b.ts; });
    double running = 0;
    for (const Change& c : list) {
      running += c.delta;
      if (std::fabs(running) < 1e-9) running = 0;  // sums of decimals do not cancel exactly
      rows.rows.push_back({Cell::Text("memory_bandwidth " + key.first + " (GB/s)"),
                           Cell::Int(g.rank), Cell::Int(key.second), Cell::Empty(), Cell::Int(c.ts),
                           Cell::Double(running)});
    }
  }
  if (rows.rows.empty()) rows.notes.push_back("the trace has no launches or copies to count");
  return rows;
}

}  // namespace profsh
