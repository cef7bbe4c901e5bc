// Temporal breakdown and communication/computation overlap (HTA's get_temporal_breakdown and
// get_comm_comp_overlap).
#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/analysis/gpu_analyses.h"
#include "engine/analysis/gpu_intervals.h"

namespace profsh {

namespace {

const char kNoDeviceWork[] = "the trace has no device work (kernels, copies, sets)";

struct TemporalFigures {
  int64_t kernel_time = 0, idle_time = 0, compute_time = 0, non_compute_time = 0;
  int64_t exposed_comm_time = 0, exposed_memory_time = 0;
};

template <typename Keep>
std::vector<Interval> MergedOf(const GpuEvents& g, const std::vector<size_t>& events, Keep keep) {
  std::vector<Interval> intervals;
  for (size_t k : events)
    if (keep(k)) intervals.push_back({g.ts[k], g.end[k]});
  return MergeIntervals(std::move(intervals));
}

TemporalFigures Figures(const GpuEvents& g, const std::vector<size_t>& events) {
  TemporalFigures f;
  auto all = MergedOf(g, events, [](size_t) { return true; });
  if (all.empty()) return f;
  f.kernel_time = all.back().end - all.front().ts;
  f.idle_time = f.kernel_time - UnionLength(all);
  auto of_type = [&](KernelType type) {
    return MergedOf(g, events, [&](size_t k) { return g.type[k] == type; });
  };
  auto compute = of_type(KernelType::kComputation);
  auto comm = of_type(KernelType::kCommunication);
  auto memory = of_type(KernelType::kMemory);
  f.compute_time = UnionLength(compute);
  f.non_compute_time = f.kernel_time - f.compute_time - f.idle_time;
  f.exposed_comm_time = UnionLength(comm) - OverlapLength(comm, compute);
  f.exposed_memory_time = UnionLength(memory) - OverlapLength(memory, compute);
  return f;
}

Cell Percent(int64_t part, int64_t whole) {
  if (whole == 0) return Cell::Empty();
  return Cell::Double(
      RoundDecimal(100.0 * static_cast<double>(part) / static_cast<double>(whole), 2));
}

void AddTemporalRow(AnalysisRows& rows, const GpuEvents& g, std::optional<int64_t> device,
                    bool by_step, Cell step, const TemporalFigures& f) {
  std::vector<Cell> row{Cell::Int(g.rank)};
  if (device) row.push_back(Cell::Int(*device));
  if (by_step) row.push_back(std::move(step));
  for (int64_t v : {f.kernel_time, f.idle_time, f.compute_time, f.non_compute_time})
    row.push_back(Cell::Int(v));
  row.push_back(Percent(f.idle_time, f.kernel_time));
  row.push_back(Percent(f.compute_time, f.kernel_time));
  row.push_back(Percent(f.non_compute_time, f.kernel_time));
  row.push_back(Cell::Int(f.exposed_comm_time));
  row.push_back(Cell::Int(f.exposed_memory_time));
  rows.rows.push_back(std::move(row));
}

}  // namespace

AnalysisRows TemporalBreakdown(const GpuEvents& g, bool by_step) {
  AnalysisRows rows;
  const std::vector<int64_t> devices = g.Devices();
  const bool per_device = devices.size() > 1;
  rows.columns = {"rank"};
  if (per_device) rows.columns.push_back("device");
  if (by_step) rows.columns.push_back("step");
  for (const char* c :
       {"kernel_time", "idle_time", "compute_time", "non_compute_time", "idle_time_pctg",
        "compute_time_pctg", "non_compute_time_pctg", "exposed_comm_time", "exposed_memory_time"})
    rows.columns.push_back(c);
  rows.notes = g.notes;
  if (g.size() == 0) {
    rows.notes.push_back(kNoDeviceWork);
    return rows;
  }
  for (int64_t device : devices) {
    std::optional<int64_t> device_column;
    if (per_device) device_column = device;
    std::vector<size_t> on_device;
    for (size_t k = 0; k < g.size(); ++k)
      if (g.device[k] == device) on_device.push_back(k);
    AddTemporalRow(rows, g, device_column, by_step, Cell::Empty(), Figures(g, on_device));
    if (!by_step) continue;
    // A kernel belongs to the step its runtime call started in (HTA's iteration rule).
    // Steps are in time order and do not overlap: each launch finds its step by bisection.
    std::vector<std::vector<size_t>> in_step(g.steps.size());
    for (size_t k : on_device) {
      if (g.launch[k] == GpuEvents::kNone) continue;
      const int64_t launched = g.runtime_ts[g.launch[k]];
      auto after = std::upper_bound(g.steps.begin(), g.steps.end(), launched,
                                    [](int64_t t, const GpuEvents::Step& s) { return t < s.ts; });
      if (after == g.steps.begin()) continue;
      const size_t step = static_cast<size_t>(after - g.steps.begin()) - 1;
      if (launched < g.steps[step].end) in_step[step].push_back(k);
    }
    for (size_t s = 0; s < g.steps.size(); ++s) {
      if (in_step[s].empty()) continue;
      AddTemporalRow(rows, g, device_column, true, Cell::Int(g.steps[s].number),
                     Figures(g, in_step[s]));
    }
  }
  return rows;
}

AnalysisRows CommCompOverlap(const GpuEvents& g) {
  AnalysisRows rows;
  const std::vector<int64_t> devices = g.Devices();
  const bool per_device = devices.size() > 1;
  rows.columns = {"rank"};
  if (per_device) rows.columns.push_back("device");
  rows.columns.push_back("comp_comm_overlap_pctg");
  rows.notes = g.notes;
  if (devices.empty()) {
    // HTA divides by zero here and prints NaN.
    rows.notes.push_back(kNoDeviceWork);
    rows.rows.push_back({Cell::Int(g.rank), Cell::Empty()});
    return rows;
  }
  for (int64_t device : devices) {
    std::vector<Interval> comm, compute;
    for (size_t k = 0; k < g.size(); ++k) {
      if (g.device[k] != device) continue;
      if (g.type[k] == KernelType::kCommunication) comm.push_back({g.ts[k], g.end[k]});
      if (g.type[k] == KernelType::kComputation) compute.push_back({g.ts[k], g.end[k]});
    }
    comm = MergeIntervals(std::move(comm));
    compute = MergeIntervals(std::move(compute));
    int64_t comm_time = UnionLength(comm);
    std::vector<Cell> row{Cell::Int(g.rank)};
    if (per_device) row.push_back(Cell::Int(device));
    if (comm_time == 0) {
      rows.notes.push_back("no communication kernels on rank " + std::to_string(g.rank) +
                           (per_device ? ", device " + std::to_string(device) : std::string()) +
                           ": the overlap is undefined (HTA prints NaN)");
      row.push_back(Cell::Empty());
    } else {
      row.push_back(Percent(OverlapLength(comm, compute), comm_time));
    }
    rows.rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace profsh
