#include "engine/analysis/gpu_events.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <unordered_map>

#include "engine/analysis/model/event_model.h"
#include "engine/analysis/ranks.h"
#include "engine/util/saturating.h"

namespace profsh {

namespace {

// HTA's name patterns are Python's re.match (at the start of the name, not necessarily to its
// end). They are written out here rather than run through std::regex, whose matcher recursed
// once per character of a `.*` (a quarter of the analyses' time on small traces, and a stack
// as deep as the name is long). As in the regexes they replace, `.` stops at a line end.
bool StartsWith(std::string_view name, std::string_view prefix) {
  return name.substr(0, prefix.size()) == prefix;
}

// `.*TEXT` at the start of `name`: TEXT on its first line.
bool OnFirstLine(std::string_view name, std::string_view text) {
  return name.substr(0, name.find_first_of("\n\r")).find(text) != std::string_view::npos;
}

bool StartsWithAny(std::string_view name, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view p) { return StartsWith(name, p); });
}

}  // namespace

const char* KernelTypeName(KernelType type) {
  switch (type) {
    case KernelType::kCommunication:
      return "COMMUNICATION";
    case KernelType::kMemory:
      return "MEMORY";
    case KernelType::kComputation:
      return "COMPUTATION";
    case KernelType::kOther:
      return "OTHER";
  }
  return "OTHER";
}

KernelType ClassifyKernel(std::string_view name) {
  // "(nccl.*)|(hip)|(hccl)|(.*ncclKernel.*)"
  if (StartsWithAny(name, {"nccl", "hip", "hccl"}) || OnFirstLine(name, "ncclKernel"))
    return KernelType::kCommunication;
  // "((hip)?Memcpy)|((hip)?Memset)|(dma)"
  if (StartsWithAny(name, {"Memcpy", "hipMemcpy", "Memset", "hipMemset", "dma"}))
    return KernelType::kMemory;
  // "(nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(.*Sync)|(Stream Wait Event)|(cuda.*LaunchKernel)|
  //  (runFunction)|(hip)|(job_exe)|(packet)|(pe_exe)|(cpum_exe_subgraph)|(hccl)|
  //  (collective_subgraph_execution)"
  const bool not_compute =
      StartsWithAny(
          name, {"nccl", "Stream Wait Event", "runFunction", "hip", "job_exe", "packet", "pe_exe",
                 "cpum_exe_subgraph", "hccl", "collective_subgraph_execution"}) ||
      OnFirstLine(name, "Memcpy") || OnFirstLine(name, "Memset") || OnFirstLine(name, "dma") ||
      OnFirstLine(name, "Sync") ||
      (StartsWith(name, "cuda") && OnFirstLine(name.substr(4), "LaunchKernel"));
  return not_compute ? KernelType::kOther : KernelType::kComputation;
}

std::vector<int64_t> GpuEvents::Devices() const {
  std::vector<int64_t> devices(device.begin(), device.end());
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return devices;
}

GpuEvents BuildGpuEvents(const Trace& trace, const GpuEventOptions& options) {
  GpuEvents g;
  g.rank = DistributedRank(trace).value_or(0);
  const EventTable& ev = trace.events;
  const EventModel& model = ModelOf(trace);
  const EventIds& ids = model.ids();
  // HTA's times: end = ts + dur in doubles, then ceil(ts) and floor(end).
  auto times = [&](uint32_t i) -> std::pair<int64_t, int64_t> {
    if (options.exact_rounding) return {CeilMicros(ev.ts(i)), FloorMicros(ev.end(i))};
    const double ts_us = MicrosAsPythonFloat(ev.ts(i));
    return {SaturatingInt64(std::ceil(ts_us)),
            SaturatingInt64(std::floor(ts_us + static_cast<double>(ev.dur(i)) / 1000.0))};
  };
  // HTA's to_numeric(errors="coerce") turns what is not a number into -1.
  auto or_minus_one = [](int64_t id) { return id == kNoId ? int64_t{-1} : id; };

  std::unordered_map<uint32_t, KernelType> type_of_name;
  const DeviceWorkIds& work = ids.device_work;
  std::vector<uint32_t> work_of_row;  // the model's device work behind each row
  for (size_t k = 0; k < work.size(); ++k) {
    const int64_t stream = or_minus_one(work.stream[k]);
    if (stream == -1) continue;  // HTA: not on a stream, not device work
    const uint32_t i = work.event[k];
    const auto [ts, end] = times(i);
    const uint32_t name = ev.name(i);
    g.ts.push_back(ts);
    g.end.push_back(end);
    g.name.push_back(name);
    g.kind.push_back(model.role(i).work);
    auto [it, added] = type_of_name.try_emplace(name, KernelType::kOther);
    if (added) it->second = ClassifyKernel(trace.str(name));
    g.type.push_back(it->second);
    g.device.push_back(or_minus_one(work.device[k]));
    g.stream.push_back(stream);
    g.correlation.push_back(or_minus_one(work.correlation[k]));
    g.bandwidth.push_back(model.args().Number(i, KnownArg::kMemoryBandwidth).value_or(0.0));
    work_of_row.push_back(static_cast<uint32_t>(k));
  }
  // Runtime calls that carry a correlation id.
  std::vector<uint32_t> row_of_runtime(ids.runtime.size(), GpuEvents::kNone);
  for (size_t r = 0; r < ids.runtime.size(); ++r) {
    const int64_t correlation = ids.runtime.correlation[r];
    if (correlation == kNoId || correlation < 0) continue;
    const uint32_t i = ids.runtime.event[r];
    const auto [ts, end] = times(i);
    row_of_runtime[r] = static_cast<uint32_t>(g.runtime_ts.size());
    g.runtime_ts.push_back(ts);
    g.runtime_end.push_back(end);
    g.runtime_correlation.push_back(correlation);
    g.runtime_name.push_back(ev.name(i));
    g.runtime_track.push_back(ev.track(i));
  }
  // ATen operators, and record_function ranges (user_annotation) as CPU annotations.
  for (size_t r = 0; r < ids.ranges.size(); ++r) {
    const uint32_t i = ids.ranges.event[r];
    const TemplateRole& role = model.role(i);
    const bool cpu_annotation = role.source == AnnotationSource::kRecordFunction;
    const bool aten = role.aten && !role.has_step;
    if (!cpu_annotation && !aten) continue;
    const auto [ts, end] = times(i);
    if (cpu_annotation) {
      g.cpu_annotation_ts.push_back(ts);
      g.cpu_annotation_end.push_back(end);
      g.cpu_annotation_name.push_back(ev.name(i));
    }
    if (aten) {
      g.aten_ts.push_back(ts);
      g.aten_end.push_back(end);
      g.aten_name.push_back(ev.name(i));
      g.aten_track.push_back(ev.track(i));
    }
  }
  for (uint32_t i : ids.gpu_annotations) {
    const auto [ts, end] = times(i);
    g.annotation_ts.push_back(ts);
    g.annotation_end.push_back(end);
    g.annotation_name.push_back(ev.name(i));
  }
  for (const StepRange& s : ids.steps) {
    const auto [ts, end] = times(s.event);
    g.steps.push_back({s.number, ts, end});
  }
  std::sort(g.steps.begin(), g.steps.end(),
            [](const GpuEvents::Step& a, const GpuEvents::Step& b) { return a.ts < b.ts; });

  // HTA's rule: a correlation's runtime call is the first one in the trace.
  g.launch.resize(g.size(), GpuEvents::kNone);
  for (size_t row = 0; row < g.size(); ++row) {
    const uint32_t r = FirstCandidate(model.links().RuntimeCandidates(work_of_row[row]));
    if (r != kNoIndex) g.launch[row] = row_of_runtime[r];
  }

  // HTA's last-step rule (Trace._filter_irrelevant_gpu_kernels): with two ProfilerSteps or
  // more, device work counts only when its runtime call started before the last step began
  // (or, with include_last_profiler_step, before the last step ended); runtime calls after it
  // are dropped as well.
  size_t distinct_steps = 0;
  {
    std::vector<int64_t> numbers;
    for (const auto& s : g.steps) numbers.push_back(s.number);
    std::sort(numbers.begin(), numbers.end());
    distinct_steps =
        static_cast<size_t>(std::unique(numbers.begin(), numbers.end()) - numbers.begin());
  }
  if (distinct_steps >= 2) {
    int64_t last_start = INT64_MIN, last_end = INT64_MIN;
    for (const auto& s : g.steps) {
      last_start = std::max(last_start, s.ts);
      last_end = std::max(last_end, s.end);
    }
    g.step_cut = true;
    g.cut_inclusive = options.include_last_profiler_step;
    g.cut_ts = options.include_last_profiler_step ? last_end : last_start;
    auto runtime_kept = [&](uint32_t r) { return g.RuntimeKept(r); };
    size_t out = 0, dropped = 0;
    for (size_t k = 0; k < g.size(); ++k) {
      if (g.launch[k] == GpuEvents::kNone || !runtime_kept(g.launch[k])) {
        ++dropped;
        continue;
      }
      g.ts[out] = g.ts[k];
      g.end[out] = g.end[k];
      g.name[out] = g.name[k];
      g.kind[out] = g.kind[k];
      g.type[out] = g.type[k];
      g.device[out] = g.device[k];
      g.stream[out] = g.stream[k];
      g.correlation[out] = g.correlation[k];
      g.bandwidth[out] = g.bandwidth[k];
      g.launch[out] = g.launch[k];
      ++out;
    }
    for (auto* column : {&g.ts, &g.end, &g.device, &g.stream, &g.correlation}) column->resize(out);
    g.name.resize(out);
    g.kind.resize(out);
    g.type.resize(out);
    g.launch.resize(out);
    g.bandwidth.resize(out);
    // HTA's CPU-side events (annotations on either side among them) obey the same cut.
    auto cut_by_start = [&](std::vector<int64_t>& ts, std::vector<int64_t>& end,
                            std::vector<uint32_t>& name) {
      size_t kept = 0;
      for (size_t a = 0; a < ts.size(); ++a) {
        bool keep = g.cut_inclusive ? ts[a] <= g.cut_ts : ts[a] < g.cut_ts;
        if (!keep) continue;
        ts[kept] = ts[a];
        end[kept] = end[a];
        name[kept] = name[a];
        ++kept;
      }
      ts.resize(kept);
      end.resize(kept);
      name.resize(kept);
    };
    cut_by_start(g.annotation_ts, g.annotation_end, g.annotation_name);
    cut_by_start(g.cpu_annotation_ts, g.cpu_annotation_end, g.cpu_annotation_name);
    if (dropped > 0 && !options.include_last_profiler_step) {
      g.notes.push_back(std::to_string(dropped) +
                        " device events launched in or after the last ProfilerStep (or without a "
                        "runtime call) left out; include_last_profiler_step=true keeps the last "
                        "step");
    }
  }
  return g;
}

}  // namespace profsh
