#include "engine/analysis/tensorboard/step_breakdown.h"

#include <algorithm>

namespace profsh {

namespace {

constexpr size_t kCategories = static_cast<size_t>(StepCategory::kCount);
constexpr const char* kColumnNames[kCategories + 1] = {
    "kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec", "other"};

double Us(int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

// The busy intervals that can overlap `window` (sorted, disjoint): a slice found by search.
std::vector<Interval> Within(const std::vector<Interval>& busy, Interval window) {
  auto first = std::lower_bound(busy.begin(), busy.end(), window.ts,
                                [](const Interval& iv, int64_t t) { return iv.end <= t; });
  auto last = std::lower_bound(first, busy.end(), window.end,
                               [](const Interval& iv, int64_t t) { return iv.ts < t; });
  return IntersectIntervals(std::vector<Interval>(first, last), {window});
}

}  // namespace

StepBreakdown ComputeStepBreakdown(const PluginSteps& steps) {
  StepBreakdown out;
  if (steps.empty()) {
    out.notes.push_back("no steps: the trace has neither ProfilerStep ranges nor CPU operators");
    return out;
  }
  if (!steps.has_profiler_steps)
    out.notes.push_back("no ProfilerStep ranges: one step \"0\" spans the CPU operators");
  if (steps.dropped_steps > 0)
    out.notes.push_back("the last " + std::to_string(steps.dropped_steps) +
                        " step(s) left out: the profiler may have missed part of their device "
                        "work (the plugin's rule)");
  out.average.step = "average";
  for (size_t s = 0; s < steps.steps.size(); ++s) {
    const Interval step = steps.steps[s];
    StepTimes row;
    row.step = steps.names[s];
    // What earlier categories left of the step: each category takes its share of that.
    std::vector<Interval> free = {step};
    for (size_t c = 0; c < kCategories; ++c) {
      const std::vector<Interval> taken = IntersectIntervals(free, Within(steps.busy[c], step));
      row.us[c] = Us(UnionLength(taken));
      free = SubtractIntervals(free, taken);
    }
    row.us[kCategories] = Us(UnionLength(free));
    row.total_us = Us(step.end - step.ts);
    for (size_t c = 0; c <= kCategories; ++c) out.average.us[c] += row.us[c];
    out.average.total_us += row.total_us;
    out.steps.push_back(std::move(row));
  }
  const double n = static_cast<double>(out.steps.size());
  for (double& v : out.average.us) v /= n;
  out.average.total_us /= n;
  for (size_t c = 0; c <= kCategories; ++c)
    out.average_pct[c] =
        out.average.total_us > 0 ? 100.0 * out.average.us[c] / out.average.total_us : 0.0;
  return out;
}

StepBreakdown ComputeStepBreakdown(const Trace& trace) {
  const EventModel& model = ModelOf(trace);
  return ComputeStepBreakdown(ComputePluginSteps(model, ReadPluginEvents(model)));
}

namespace {

std::vector<std::string> Columns() {
  std::vector<std::string> columns = {"step"};
  for (const char* name : kColumnNames) columns.emplace_back(name);
  columns.emplace_back("total");
  return columns;
}

std::vector<Cell> RowOf(const StepTimes& t) {
  std::vector<Cell> row = {Cell::Text(t.step)};
  for (double v : t.us) row.push_back(Cell::Double(v));
  row.push_back(Cell::Double(t.total_us));
  return row;
}

}  // namespace

AnalysisRows StepBreakdownRows(const StepBreakdown& breakdown) {
  AnalysisRows rows;
  rows.columns = Columns();
  for (const StepTimes& t : breakdown.steps) rows.rows.push_back(RowOf(t));
  rows.notes = breakdown.notes;
  return rows;
}

AnalysisRows StepBreakdownAverageRows(const StepBreakdown& breakdown) {
  AnalysisRows rows;
  rows.columns = Columns();
  for (const char* name : kColumnNames) rows.columns.push_back(std::string(name) + "_pct");
  if (breakdown.steps.empty()) return rows;
  std::vector<Cell> row = RowOf(breakdown.average);
  for (double pct : breakdown.average_pct) row.push_back(Cell::Double(pct));
  rows.rows.push_back(row);
  return rows;
}

}  // namespace profsh
