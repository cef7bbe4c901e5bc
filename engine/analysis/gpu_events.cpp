#include "engine/analysis/gpu_events.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <unordered_map>

#include "engine/analysis/arg_reader.h"
#include "engine/analysis/ranks.h"
#include "engine/trace/kineto_schema.h"
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

enum class Role : uint8_t { kNone, kDeviceWork, kRuntime, kAnnotation, kStep, kAtenOp };

struct GpuTemplateRole {
  Role role = Role::kNone;
  DeviceWorkKind kind = DeviceWorkKind::kKernel;
  int64_t step = 0;
  // A user_annotation range: a CPU annotation besides its role (a ProfilerStep#N is both).
  bool cpu_annotation = false;
};

GpuTemplateRole RoleOf(const Trace& trace, const EventTemplate& t) {
  GpuTemplateRole r;
  if (EventTable::PhaseOf(t.kind) != 'X') return r;
  std::string_view cat = trace.category_name(EventTable::CategoryOf(t.kind));
  if (cat == "kernel" || cat == "Kernel" || cat == "mtia_ccp_events") {
    r.role = Role::kDeviceWork;
  } else if (cat == "gpu_memcpy" || cat == "Memcpy") {
    r = {Role::kDeviceWork, DeviceWorkKind::kMemcpy, 0};
  } else if (cat == "gpu_memset" || cat == "Memset") {
    r = {Role::kDeviceWork, DeviceWorkKind::kMemset, 0};
  } else if (cat == "cuda_sync") {
    r = {Role::kDeviceWork, DeviceWorkKind::kSync, 0};
  } else if (cat == "gpu_user_annotation") {
    r.role = Role::kAnnotation;
  } else if (cat == "cuda_driver" || (cat.size() > 8 && cat.substr(cat.size() - 8) == "_runtime")) {
    r.role = Role::kRuntime;
  } else {
    r.cpu_annotation = cat == "user_annotation";
    std::string_view name = trace.str(t.name);
    if (auto step = kineto::ProfilerStepNumber(name)) {
      r.role = Role::kStep;
      r.step = *step;
    } else if (name.rfind("aten::", 0) == 0) {
      r.role = Role::kAtenOp;
    }
  }
  return r;
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
  std::vector<GpuTemplateRole> roles;
  roles.reserve(ev.templates().size());
  for (const EventTemplate& t : ev.templates()) roles.push_back(RoleOf(trace, t));

  enum Key : size_t { kStream, kDevice, kCorrelation, kBandwidth };
  ArgReader reader(trace, {"stream", "device", "correlation", "memory bandwidth (GB/s)"});
  auto read_int = [&](ArgRef args, size_t key) -> int64_t {
    ArgValue v;
    if (!reader.Get(args, key, &v)) return -1;
    if (v.type == ArgType::kInt || v.type == ArgType::kUInt) return v.int_value;
    if (v.type == ArgType::kDouble) return SaturatingInt64(v.double_value);
    return -1;  // HTA's to_numeric(errors="coerce") turns text into -1
  };

  std::unordered_map<uint32_t, KernelType> type_of_name;
  const auto& template_column = ev.template_column();
  for (size_t i = 0; i < ev.size(); ++i) {
    const GpuTemplateRole& role = roles[template_column[i]];
    if (role.role == Role::kNone && !role.cpu_annotation) continue;
    int64_t ts, end;
    if (options.exact_rounding) {
      ts = CeilMicros(ev.ts(i));
      end = FloorMicros(ev.end(i));
    } else {
      // HTA: end = ts + dur in doubles, then ceil(ts) and floor(end).
      const double ts_us = MicrosAsPythonFloat(ev.ts(i));
      ts = SaturatingInt64(std::ceil(ts_us));
      end = SaturatingInt64(std::floor(ts_us + static_cast<double>(ev.dur(i)) / 1000.0));
    }
    const EventTemplate& t = ev.event_template(i);
    if (role.cpu_annotation) {
      g.cpu_annotation_ts.push_back(ts);
      g.cpu_annotation_end.push_back(end);
      g.cpu_annotation_name.push_back(t.name);
    }
    switch (role.role) {
      case Role::kDeviceWork: {
        ArgRef args = ev.args(i);
        int64_t stream = read_int(args, kStream);
        if (stream == -1) break;  // HTA: not on a stream, not device work
        g.ts.push_back(ts);
        g.end.push_back(end);
        g.name.push_back(t.name);
        g.kind.push_back(role.kind);
        auto [it, added] = type_of_name.try_emplace(t.name, KernelType::kOther);
        if (added) it->second = ClassifyKernel(trace.str(t.name));
        g.type.push_back(it->second);
        g.device.push_back(read_int(args, kDevice));
        g.stream.push_back(stream);
        g.correlation.push_back(read_int(args, kCorrelation));
        ArgValue bw;
        g.bandwidth.push_back(reader.Get(args, kBandwidth, &bw) && bw.is_number()
                                  ? (bw.type == ArgType::kDouble
                                         ? bw.double_value
                                         : static_cast<double>(bw.int_value))
                                  : 0.0);
        break;
      }
      case Role::kRuntime: {
        int64_t correlation = read_int(ev.args(i), kCorrelation);
        if (correlation < 0) break;
        g.runtime_ts.push_back(ts);
        g.runtime_end.push_back(end);
        g.runtime_correlation.push_back(correlation);
        g.runtime_name.push_back(t.name);
        g.runtime_track.push_back(t.track);
        break;
      }
      case Role::kAtenOp:
        g.aten_ts.push_back(ts);
        g.aten_end.push_back(end);
        g.aten_name.push_back(t.name);
        g.aten_track.push_back(t.track);
        break;
      case Role::kAnnotation:
        g.annotation_ts.push_back(ts);
        g.annotation_end.push_back(end);
        g.annotation_name.push_back(t.name);
        break;
      case Role::kStep:
        g.steps.push_back({role.step, ts, end});
        break;
      case Role::kNone:
        break;
    }
  }
  std::sort(g.steps.begin(), g.steps.end(),
            [](const GpuEvents::Step& a, const GpuEvents::Step& b) { return a.ts < b.ts; });

  // Each correlation's runtime call; the first one when a trace repeats an id.
  std::unordered_map<int64_t, uint32_t> runtime_of;
  runtime_of.reserve(g.runtime_correlation.size());
  for (size_t r = 0; r < g.runtime_correlation.size(); ++r)
    runtime_of.try_emplace(g.runtime_correlation[r], static_cast<uint32_t>(r));
  g.launch.resize(g.size(), GpuEvents::kNone);
  for (size_t k = 0; k < g.size(); ++k) {
    auto it = runtime_of.find(g.correlation[k]);
    if (it != runtime_of.end()) g.launch[k] = it->second;
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
