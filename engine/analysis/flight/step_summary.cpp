#include "engine/analysis/flight/step_summary.h"

#include <algorithm>
#include <unordered_map>

#include "engine/analysis/cpu_samples.h"
#include "engine/analysis/gpu_intervals.h"
#include "engine/analysis/model/event_model.h"
#include "engine/analysis/model/memory_records.h"

namespace profsh {

namespace {

// Per name id: time and calls, then sorted into rows, the longest first (ties by name).
std::vector<NamedTime> SortedTimes(const Trace& trace,
                                   const std::unordered_map<uint32_t, NamedTime>& by_name,
                                   size_t limit) {
  std::vector<NamedTime> rows;
  rows.reserve(by_name.size());
  for (const auto& [name, row] : by_name) {
    rows.push_back(row);
    rows.back().name = std::string(trace.str(name));
  }
  std::sort(rows.begin(), rows.end(), [](const NamedTime& a, const NamedTime& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  if (rows.size() > limit) rows.resize(limit);
  return rows;
}

bool HasCpuSamples(const Trace& trace) {
  for (uint32_t id : trace.categories) {
    if (id != 0 && trace.str(id) == kCpuSampleCategoryName) return true;
  }
  return false;
}

void SummarizeMemory(const Trace& trace, StepSummary* s) {
  std::vector<MemoryRecord> records = MemoryRecordsOf(trace);
  if (records.empty()) return;
  s->has_memory = true;
  std::stable_sort(records.begin(), records.end(),
                   [&](const MemoryRecord& a, const MemoryRecord& b) {
                     return trace.events.ts(a.event) < trace.events.ts(b.event);
                   });
  int64_t level = s->memory_at_start;
  s->memory_peak = level;
  for (const MemoryRecord& r : records) {
    level += r.bytes;
    s->memory_peak = std::max(s->memory_peak, level);
  }
  s->memory_growth = level - s->memory_at_start;
}

void SummarizeSamples(const Trace& trace, StepSummary* s) {
  if (!HasCpuSamples(trace)) return;
  const CpuSamples samples = CollectCpuSamples(trace);
  std::unordered_map<uint32_t, uint64_t> by_function;
  for (const CpuSample& c : samples.samples) by_function[c.function] += c.weight;
  for (const auto& [function, n] : by_function)
    s->top_functions.push_back(NamedSamples{std::string(samples.strings.Get(function)), n});
  std::sort(s->top_functions.begin(), s->top_functions.end(),
            [](const NamedSamples& a, const NamedSamples& b) {
              return a.samples != b.samples ? a.samples > b.samples : a.name < b.name;
            });
  if (s->top_functions.size() > kStepTopFunctions) s->top_functions.resize(kStepTopFunctions);
}

}  // namespace

int64_t StepSummary::RangeTime(const std::string& name) const {
  for (const NamedTime& r : ranges) {
    if (r.name == name) return r.total_ns;
  }
  return 0;
}

StepSummary SummarizeStep(const Trace& trace, int64_t pid, int64_t step, int64_t begin_ns,
                          int64_t end_ns, int64_t memory_at_start) {
  StepSummary s;
  s.pid = pid;
  s.step = step;
  s.begin_ns = begin_ns;
  s.end_ns = std::max(end_ns, begin_ns);
  s.duration_ns = s.end_ns - s.begin_ns;
  s.memory_at_start = memory_at_start;
  s.memory_peak = memory_at_start;
  s.events = trace.events.size();
  const EventModel& model = ModelOf(trace);
  std::unordered_map<uint32_t, NamedTime> ranges, operators;
  std::vector<Interval> device;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    if (trace.events.phase(i) != 'X') continue;
    const TemplateRole& role = model.role(i);
    if (role.role == EventRole::kAnnotation || role.role == EventRole::kCpuOp) {
      NamedTime& row =
          (role.role == EventRole::kAnnotation ? ranges : operators)[trace.events.name(i)];
      row.total_ns += trace.events.dur(i);
      ++row.count;
    } else if (role.role == EventRole::kDeviceWork) {
      device.push_back(Interval{trace.events.ts(i), trace.events.end(i)});
    }
  }
  s.ranges = SortedTimes(trace, ranges, SIZE_MAX);
  s.top_operators = SortedTimes(trace, operators, kStepTopOperators);
  if (!device.empty()) {
    s.has_gpu = true;
    // Device work is clipped to the step: a kernel launched in it may run past its end.
    const int64_t span = s.duration_ns;
    for (Interval& v : device) {
      v.ts = std::clamp<int64_t>(v.ts, 0, span);
      v.end = std::clamp<int64_t>(v.end, 0, span);
    }
    s.gpu_busy_ns = UnionLength(MergeIntervals(std::move(device)));
    s.gpu_idle_ns = span - s.gpu_busy_ns;
    s.gpu_idle_fraction = span > 0 ? static_cast<double>(s.gpu_idle_ns) / span : 0;
  }
  SummarizeMemory(trace, &s);
  SummarizeSamples(trace, &s);
  return s;
}

}  // namespace profsh
