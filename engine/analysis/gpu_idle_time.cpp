// Idle time per stream by cause (HTA's get_idle_time_breakdown).
#include <algorithm>
#include <cmath>
#include <map>

#include "engine/analysis/gpu_analyses.h"

namespace profsh {

namespace {

enum IdleCategory : int { kHostWait = 0, kKernelWait = 1, kOtherWait = 2 };
const char* const kCategoryNames[] = {"host_wait", "kernel_wait", "other"};

}  // namespace

IdleTimeBreakdown ComputeIdleTimeBreakdown(const GpuEvents& g, const IdleTimeOptions& options) {
  IdleTimeBreakdown out;
  // Streams are numbered per device: with several devices, a stream is (device, stream).
  const bool per_device = g.Devices().size() > 1;
  auto head = [&](std::vector<std::string> rest) {
    std::vector<std::string> columns{"rank"};
    if (per_device) columns.push_back("device");
    columns.insert(columns.end(), rest.begin(), rest.end());
    return columns;
  };
  out.breakdown.columns = head({"stream", "idle_category", "idle_time", "idle_time_ratio"});
  out.interval_stats.columns =
      head({"stream", "idle_category", "count", "mean", "std", "min", "25%", "50%", "75%", "max"});
  out.breakdown.notes = g.notes;
  std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> by_stream;  // (device, stream)
  for (size_t k = 0; k < g.size(); ++k) {
    if (g.kind[k] == DeviceWorkKind::kSync) continue;  // HTA keeps kernels, copies and sets
    if (!options.streams.empty() && std::find(options.streams.begin(), options.streams.end(),
                                              g.stream[k]) == options.streams.end())
      continue;
    by_stream[{per_device ? g.device[k] : 0, g.stream[k]}].push_back(k);
  }
  if (by_stream.empty()) {
    out.breakdown.notes.push_back(g.size() == 0
                                      ? "the trace has no device work (kernels, copies, sets)"
                                      : "no kernels, copies or sets on the streams asked for");
    out.interval_stats.notes = out.breakdown.notes;
    return out;
  }
  for (auto& [device_stream, events] : by_stream) {
    const auto [device, stream] = device_stream;
    auto key_cells = [&, device = device, stream = stream] {
      std::vector<Cell> cells{Cell::Int(g.rank)};
      if (per_device) cells.push_back(Cell::Int(device));
      cells.push_back(Cell::Int(stream));
      return cells;
    };
    std::stable_sort(events.begin(), events.end(),
                     [&](size_t a, size_t b) { return g.ts[a] < g.ts[b]; });
    // Per category: whether it occurs, and the gaps before its kernels (the first kernel of a
    // stream has no gap but still makes its category, "other", appear, as in HTA).
    bool present[3] = {false, false, false};
    std::vector<int64_t> gaps[3];
    for (size_t i = 0; i < events.size(); ++i) {
      size_t k = events[i];
      if (i == 0) {
        present[kOtherWait] = true;
        continue;
      }
      int64_t prev_end = g.end[events[i - 1]];
      int64_t gap = g.ts[k] - prev_end;
      int category = kOtherWait;
      bool launched_after = g.launch[k] != GpuEvents::kNone && g.runtime_ts[g.launch[k]] > prev_end;
      if (launched_after) {
        category = kHostWait;  // the CPU had not yet launched the kernel when the stream ran dry
      } else if (gap < options.consecutive_kernel_delay) {
        category = kKernelWait;  // a gap as short as back-to-back launches
      }
      present[category] = true;
      gaps[category].push_back(gap);
    }
    int64_t total = 0;
    for (const auto& gs : gaps)
      for (int64_t v : gs) total += v;
    for (int c = 0; c < 3; ++c) {
      if (!present[c]) continue;
      int64_t sum = 0;
      for (int64_t v : gaps[c]) sum += v;
      Cell ratio = total == 0 ? Cell::Empty()
                              : Cell::Double(RoundDecimal(
                                    static_cast<double>(sum) / static_cast<double>(total), 2));
      std::vector<Cell> row = key_cells();
      row.push_back(Cell::Text(kCategoryNames[c]));
      row.push_back(Cell::Int(sum));
      row.push_back(std::move(ratio));
      out.breakdown.rows.push_back(std::move(row));
      std::vector<int64_t> sorted = gaps[c];
      std::sort(sorted.begin(), sorted.end());
      std::vector<Cell> stats = key_cells();
      stats.push_back(Cell::Text(kCategoryNames[c]));
      stats.push_back(Cell::Int(static_cast<int64_t>(sorted.size())));
      if (sorted.empty()) {
        for (int j = 0; j < 7; ++j) stats.push_back(Cell::Empty());
      } else {
        DurationStats s = SummarizeDurations(sorted);
        stats.push_back(Cell::Double(RoundDecimal(s.mean, 2)));
        stats.push_back(sorted.size() > 1 ? Cell::Double(RoundDecimal(s.stddev, 2))
                                          : Cell::Empty());
        stats.push_back(Cell::Int(s.min));
        for (double q : {0.25, 0.5, 0.75})
          stats.push_back(Cell::Double(RoundDecimal(QuantileOfSorted(sorted, q), 2)));
        stats.push_back(Cell::Int(s.max));
      }
      out.interval_stats.rows.push_back(std::move(stats));
    }
  }
  return out;
}

}  // namespace profsh
