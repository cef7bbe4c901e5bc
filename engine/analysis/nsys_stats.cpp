#include "engine/analysis/nsys_stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "engine/analysis/arg_reader.h"
#include "engine/analysis/range_nesting.h"
#include "engine/util/saturating.h"

namespace profsh {

namespace {

// The trace's events as nsys' tables hold them: device work, runtime calls, ranges.
struct NsysEvents {
  std::vector<Span> kernels, copies, runtime, ranges;
};

enum class Role : uint8_t { kNone, kKernel, kCopy, kRuntime, kRange };

Role RoleOf(const Trace& trace, const EventTemplate& t) {
  if (EventTable::PhaseOf(t.kind) != 'X') return Role::kNone;
  std::string_view cat = trace.category_name(EventTable::CategoryOf(t.kind));
  if (cat == "kernel" || cat == "Kernel") return Role::kKernel;
  if (cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "Memcpy" || cat == "Memset")
    return Role::kCopy;
  if (cat == "cuda_driver" || (cat.size() > 8 && cat.substr(cat.size() - 8) == "_runtime"))
    return Role::kRuntime;
  if (cat == "user_annotation" || cat == "nvtx" || cat == "itt") return Role::kRange;
  return Role::kNone;
}

NsysEvents Collect(const Trace& trace) {
  NsysEvents out;
  const EventTable& ev = trace.events;
  std::vector<Role> roles;
  for (const EventTemplate& t : ev.templates()) roles.push_back(RoleOf(trace, t));
  ArgReader reader(trace, {"correlation", "bytes"});
  const auto& template_column = ev.template_column();
  for (size_t i = 0; i < ev.size(); ++i) {
    Role role = roles[template_column[i]];
    if (role == Role::kNone) continue;
    Span s{ev.ts(i), ev.end(i), ev.name(i), ev.track(i), -1, 0, i};
    if (role != Role::kRange) reader.GetInt(ev.args(i), 0, &s.correlation);
    switch (role) {
      case Role::kKernel:
        out.kernels.push_back(s);
        break;
      case Role::kCopy:
        reader.GetInt(ev.args(i), 1, &s.bytes);
        out.copies.push_back(s);
        break;
      case Role::kRuntime:
        out.runtime.push_back(s);
        break;
      case Role::kRange:
        out.ranges.push_back(s);
        break;
      case Role::kNone:
        break;
    }
  }
  return out;
}

struct Summary {
  double total = 0, avg = 0, med = 0, min = 0, max = 0, stddev = 0;
  int64_t count = 0;
};

Summary Summarize(std::vector<double> values) {
  Summary s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  for (double v : values) s.total += v;
  s.min = values.front();
  s.max = values.back();
  s.avg = s.total / static_cast<double>(values.size());
  size_t mid = values.size() / 2;
  s.med = values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
  if (values.size() > 1) {
    double squares = 0;
    for (double v : values) squares += (v - s.avg) * (v - s.avg);
    s.stddev = std::sqrt(squares / static_cast<double>(values.size() - 1));
  }
  return s;
}

// A group's summary row: [Time (%),] Total, count, Avg, Med, Min, Max, StdDev, then `tail`.
struct Group {
  std::vector<Cell> head;  // cells before the statistics
  std::vector<double> values;
  std::vector<Cell> tail;
};

// nsys' "Time (%)" share and statistics, most time first.
AnalysisRows TimeSummary(std::vector<std::string> columns, std::vector<Group> groups,
                         bool with_share, int value_decimals, bool integral_extremes) {
  AnalysisRows rows;
  rows.columns = std::move(columns);
  std::vector<std::pair<Summary, Group*>> summaries;
  double all = 0;
  for (Group& g : groups) {
    summaries.push_back({Summarize(g.values), &g});
    all += summaries.back().first.total;
  }
  std::stable_sort(summaries.begin(), summaries.end(),
                   [](const auto& a, const auto& b) { return a.first.total > b.first.total; });
  for (auto& [s, g] : summaries) {
    std::vector<Cell> row = g->head;
    if (with_share) row.push_back(Cell::Fixed(all > 0 ? 100.0 * s.total / all : 0.0, 1));
    auto value = [&](double v, bool extreme) {
      return extreme && integral_extremes ? Cell::Int(SaturatingInt64(v))
                                          : Cell::Fixed(v, value_decimals);
    };
    row.push_back(integral_extremes ? Cell::Int(SaturatingInt64(s.total))
                                    : Cell::Fixed(s.total, value_decimals));
    row.push_back(Cell::Int(s.count));
    row.push_back(Cell::Fixed(s.avg, value_decimals < 0 ? 1 : value_decimals));
    row.push_back(Cell::Fixed(s.med, value_decimals < 0 ? 1 : value_decimals));
    row.push_back(value(s.min, true));
    row.push_back(value(s.max, true));
    row.push_back(Cell::Fixed(s.stddev, value_decimals < 0 ? 1 : value_decimals));
    for (const Cell& c : g->tail) row.push_back(c);
    rows.rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<Group> GroupByName(const Trace& trace, const std::vector<Span>& spans) {
  std::map<uint32_t, size_t> index;
  std::vector<Group> groups;
  for (const Span& s : spans) {
    auto [it, added] = index.try_emplace(s.name, groups.size());
    if (added) groups.push_back({{}, {}, {Cell::Text(std::string(trace.str(s.name)))}});
    groups[it->second].values.push_back(static_cast<double>(s.end - s.ts));
  }
  return groups;
}

// nsys' name of a copy: "[CUDA memcpy Host-to-Device]", "[CUDA memset]", ...
std::string CopyOperation(std::string_view name) {
  if (name.rfind("Memset", 0) == 0) return "[CUDA memset]";
  static const std::pair<std::string_view, std::string_view> kinds[] = {
      {"HtoD", "Host-to-Device"}, {"DtoH", "Device-to-Host"}, {"DtoD", "Device-to-Device"},
      {"HtoH", "Host-to-Host"},   {"PtoP", "Peer-to-Peer"},
  };
  for (const auto& [short_name, long_name] : kinds)
    if (name.find(short_name) != std::string_view::npos)
      return "[CUDA memcpy " + std::string(long_name) + "]";
  return "[CUDA memcpy Unknown]";
}

std::string Pid(const Trace& trace, uint32_t track) {
  return trace.FormatIdent(trace.tracks[track].pid);
}
std::string Tid(const Trace& trace, uint32_t track) {
  return trace.FormatIdent(trace.tracks[track].tid);
}

AnalysisRows NvtxKernelSummary(const Trace& trace, const NsysEvents& e) {
  RangeTree tree = NestRanges(e.ranges);
  auto enclosing = EnclosingRanges(e.ranges, tree, e.runtime);
  std::unordered_map<int64_t, uint32_t> call_of;
  for (size_t c = 0; c < e.runtime.size(); ++c)
    call_of.try_emplace(e.runtime[c].correlation, static_cast<uint32_t>(c));
  struct Key {
    uint32_t range_name;  // UINT32_MAX: no range
    uint32_t track;
    uint32_t kernel_name;
    bool operator<(const Key& o) const {
      return std::tie(range_name, track, kernel_name) <
             std::tie(o.range_name, o.track, o.kernel_name);
    }
  };
  struct Acc {
    std::vector<double> durations;
    std::vector<uint32_t> instances;
  };
  std::map<Key, Acc> groups;
  for (const Span& k : e.kernels) {
    auto it = call_of.find(k.correlation);
    Key key{UINT32_MAX, UINT32_MAX, k.name};
    uint32_t instance = UINT32_MAX;
    if (it != call_of.end()) {
      key.track = e.runtime[it->second].track;
      if (!enclosing[it->second].empty()) {
        instance = enclosing[it->second].back();
        key.range_name = e.ranges[instance].name;
      }
    }
    Acc& acc = groups[key];
    acc.durations.push_back(static_cast<double>(k.end - k.ts));
    if (instance != UINT32_MAX) acc.instances.push_back(instance);
  }
  AnalysisRows rows;
  rows.columns = {"NVTX Range", "Style",           "PID",        "TID",      "NVTX Inst",
                  "Kern Inst",  "Total Time (ns)", "Avg (ns)",   "Med (ns)", "Min (ns)",
                  "Max (ns)",   "StdDev (ns)",     "Kernel Name"};
  for (auto& [key, acc] : groups) {
    std::sort(acc.instances.begin(), acc.instances.end());
    int64_t distinct =
        std::unique(acc.instances.begin(), acc.instances.end()) - acc.instances.begin();
    Summary s = Summarize(acc.durations);
    bool ranged = key.range_name != UINT32_MAX;
    bool launched = key.track != UINT32_MAX;
    rows.rows.push_back(
        {ranged ? Cell::Text(std::string(trace.str(key.range_name))) : Cell::Empty(),
         ranged ? Cell::Text("PushPop") : Cell::Empty(),
         launched ? Cell::Text(Pid(trace, key.track)) : Cell::Empty(),
         launched ? Cell::Text(Tid(trace, key.track)) : Cell::Empty(),
         ranged ? Cell::Int(distinct) : Cell::Empty(), Cell::Int(s.count),
         Cell::Int(SaturatingInt64(s.total)), Cell::Fixed(s.avg, 1), Cell::Fixed(s.med, 1),
         Cell::Int(SaturatingInt64(s.min)), Cell::Int(SaturatingInt64(s.max)),
         Cell::Fixed(s.stddev, 1), Cell::Text(std::string(trace.str(key.kernel_name)))});
  }
  // By range name (kernels outside any range first), then most time first.
  std::vector<size_t> order(rows.rows.size());
  for (size_t r = 0; r < order.size(); ++r) order[r] = r;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    std::string_view ra = rows.rows.text(a, 0), rb = rows.rows.text(b, 0);
    if (ra != rb) return ra < rb;
    return rows.rows.cell(a, 6).int_value > rows.rows.cell(b, 6).int_value;
  });
  rows.rows.Reorder(order);
  return rows;
}

AnalysisRows NvtxGpuProjection(const Trace& trace, const NsysEvents& e) {
  RangeTree tree = NestRanges(e.ranges);
  auto enclosing = EnclosingRanges(e.ranges, tree, e.runtime);
  std::unordered_map<int64_t, std::vector<uint32_t>> calls_of;
  for (size_t c = 0; c < e.runtime.size(); ++c)
    calls_of[e.runtime[c].correlation].push_back(static_cast<uint32_t>(c));
  // Per range instance: the span its device work covers and how many operations it launched.
  std::vector<int64_t> first(e.ranges.size(), INT64_MAX), last(e.ranges.size(), INT64_MIN),
      ops(e.ranges.size(), 0);
  auto project = [&](const Span& work) {
    auto it = calls_of.find(work.correlation);
    if (it == calls_of.end()) return;
    for (uint32_t r : enclosing[it->second.front()]) {
      first[r] = std::min(first[r], work.ts);
      last[r] = std::max(last[r], work.end);
      ops[r]++;
    }
  };
  for (const Span& k : e.kernels) project(k);
  for (const Span& c : e.copies) project(c);
  struct Acc {
    std::vector<double> projected;
    double range_time = 0, gpu_ops = 0, levels = 0, children = 0;
  };
  std::map<uint32_t, Acc> groups;
  for (size_t r = 0; r < e.ranges.size(); ++r) {
    if (ops[r] == 0) continue;
    Acc& acc = groups[e.ranges[r].name];
    acc.projected.push_back(static_cast<double>(last[r] - first[r]));
    acc.range_time += static_cast<double>(e.ranges[r].end - e.ranges[r].ts);
    acc.gpu_ops += static_cast<double>(ops[r]);
    acc.levels += tree.depth[r];
    acc.children += tree.children[r];
  }
  std::vector<std::pair<uint32_t, Acc*>> order;
  for (auto& [name, acc] : groups) order.push_back({name, &acc});
  AnalysisRows rows;
  rows.columns = {"Range",
                  "Style",
                  "Total Proj Time (ns)",
                  "Total Range Time (ns)",
                  "Range Instances",
                  "Proj Avg (ns)",
                  "Proj Med (ns)",
                  "Proj Min (ns)",
                  "Proj Max (ns)",
                  "Proj StdDev (ns)",
                  "Total GPU Ops",
                  "Avg GPU Ops",
                  "Avg Range Lvl",
                  "Avg Num Child"};
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    double ta = 0, tb = 0;
    for (double v : a.second->projected) ta += v;
    for (double v : b.second->projected) tb += v;
    return ta > tb;
  });
  for (auto& [name, acc] : order) {
    Summary s = Summarize(acc->projected);
    double n = static_cast<double>(s.count);
    rows.rows.push_back({Cell::Text(std::string(trace.str(name))), Cell::Text("PushPop"),
                         Cell::Int(SaturatingInt64(s.total)),
                         Cell::Int(SaturatingInt64(acc->range_time)), Cell::Int(s.count),
                         Cell::Fixed(s.avg, 1), Cell::Fixed(s.med, 1),
                         Cell::Int(SaturatingInt64(s.min)), Cell::Int(SaturatingInt64(s.max)),
                         Cell::Fixed(s.stddev, 1), Cell::Int(SaturatingInt64(acc->gpu_ops)),
                         Cell::Fixed(acc->gpu_ops / n, 1), Cell::Fixed(acc->levels / n, 1),
                         Cell::Fixed(acc->children / n, 1)});
  }
  return rows;
}

}  // namespace

const std::vector<std::string>& NsysReportNames() {
  static const std::vector<std::string> names = {
      "cuda_gpu_kern_sum", "cuda_api_sum",  "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
      "nvtx_sum",          "nvtx_kern_sum", "nvtx_gpu_proj_sum"};
  return names;
}

Result<AnalysisRows> NsysStatsReport(const Trace& trace, std::string_view report) {
  const auto& names = NsysReportNames();
  if (std::find(names.begin(), names.end(), report) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    return Error{"unknown report '" + std::string(report) + "' (known: " + known + ")"};
  }
  NsysEvents e = Collect(trace);
  auto stat_columns = [](const char* count, const char* last) {
    return std::vector<std::string>{"Time (%)", "Total Time (ns)", count,
                                    "Avg (ns)", "Med (ns)",        "Min (ns)",
                                    "Max (ns)", "StdDev (ns)",     last};
  };
  AnalysisRows rows;
  if (report == "cuda_gpu_kern_sum") {
    rows = TimeSummary(stat_columns("Instances", "Name"), GroupByName(trace, e.kernels), true, -1,
                       true);
    if (e.kernels.empty()) rows.notes.push_back("the trace has no kernels");
  } else if (report == "cuda_api_sum") {
    rows = TimeSummary(stat_columns("Num Calls", "Name"), GroupByName(trace, e.runtime), true, -1,
                       true);
    if (e.runtime.empty()) rows.notes.push_back("the trace has no runtime API calls");
  } else if (report == "cuda_gpu_mem_time_sum" || report == "cuda_gpu_mem_size_sum") {
    const bool by_size = report == "cuda_gpu_mem_size_sum";
    std::map<std::string, Group> groups;
    for (const Span& c : e.copies) {
      std::string op = CopyOperation(trace.str(c.name));
      Group& g = groups[op];
      if (g.tail.empty()) g.tail.push_back(Cell::Text(op));
      g.values.push_back(by_size ? static_cast<double>(c.bytes) / 1e6
                                 : static_cast<double>(c.end - c.ts));
    }
    std::vector<Group> list;
    for (auto& [op, g] : groups) list.push_back(std::move(g));
    if (by_size) {
      rows = TimeSummary({"Total (MB)", "Count", "Avg (MB)", "Med (MB)", "Min (MB)", "Max (MB)",
                          "StdDev (MB)", "Operation"},
                         std::move(list), false, 3, false);
    } else {
      rows = TimeSummary(stat_columns("Count", "Operation"), std::move(list), true, -1, true);
    }
    if (e.copies.empty()) rows.notes.push_back("the trace has no memory copies or sets");
  } else if (report == "nvtx_sum") {
    std::vector<Group> groups = GroupByName(trace, e.ranges);
    for (Group& g : groups) g.tail.insert(g.tail.begin(), Cell::Text("PushPop"));
    rows = TimeSummary({"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
                        "Min (ns)", "Max (ns)", "StdDev (ns)", "Style", "Range"},
                       std::move(groups), true, -1, true);
    if (e.ranges.empty())
      rows.notes.push_back("the trace has no ranges (NVTX, ITT, record_function)");
  } else if (report == "nvtx_kern_sum") {
    rows = NvtxKernelSummary(trace, e);
    if (e.kernels.empty()) rows.notes.push_back("the trace has no kernels");
  } else {
    rows = NvtxGpuProjection(trace, e);
    if (rows.rows.empty()) rows.notes.push_back("no range launched device work");
  }
  return rows;
}

}  // namespace profsh
