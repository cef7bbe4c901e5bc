#include "engine/analysis/tensorboard/plugin_events.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <numeric>
#include <string>

namespace profsh {

PluginEventType PluginTypeOfCategory(std::string_view category) {
  std::string c(category);
  for (char& ch : c) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  using T = PluginEventType;
  if (c == "trace") return T::kTrace;
  if (c == "cpu_op" || c == "operator") return T::kOperator;
  if (c == "user_annotation" || c == "gpu_user_annotation") return T::kUserAnnotation;
  if (c == "python") return T::kPython;
  if (c == "python_function") return T::kPythonFunction;
  if (c == "runtime" || c == "cuda_runtime" || c == "mtia_runtime" || c == "glow_runtime" ||
      c == "xpu_runtime" || c == "privateuse1_runtime")
    return T::kRuntime;
  if (c == "kernel") return T::kKernel;
  if (c == "memcpy" || c == "gpu_memcpy") return T::kMemcpy;
  if (c == "memset" || c == "gpu_memset") return T::kMemset;
  return T::kNone;
}

bool IsPluginCollectiveName(std::string_view name) {
  static constexpr std::array<std::string_view, 5> kOps = {"broadcast", "reduce", "all_reduce",
                                                           "all_gather", "reduce_scatter"};
  for (std::string_view lib : {std::string_view("nccl:"), std::string_view("gloo:")}) {
    if (!name.starts_with(lib)) continue;
    const std::string_view op = name.substr(lib.size());
    return std::find(kOps.begin(), kOps.end(), op) != kOps.end();
  }
  return false;
}

bool IsNcclCollectiveName(std::string_view name) {
  return name.starts_with("nccl:") && IsPluginCollectiveName(name);
}

bool IsPluginDataLoaderName(std::string_view name) {
  return (name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__")) ||
         name.starts_with("enumerate(DataPipe)#");
}

namespace {

PluginTemplate ClassifyTemplate(const Trace& trace, const EventTemplate& t, const TemplateRole& r) {
  PluginTemplate p;
  if (EventTable::PhaseOf(t.kind) != 'X') return p;
  p.type = PluginTypeOfCategory(trace.category_name(EventTable::CategoryOf(t.kind)));
  const std::string_view name = trace.str(t.name);
  const bool operator_like =
      p.type == PluginEventType::kOperator || p.type == PluginEventType::kUserAnnotation;
  // trace.py takes int(name.split('#')[1]): the model's step number, read the same way.
  p.step = operator_like && r.has_step && name.starts_with("ProfilerStep#");
  p.step_number = r.step;
  p.dataloader = operator_like && IsPluginDataLoaderName(name);
  p.collective = IsPluginCollectiveName(name);
  return p;
}

}  // namespace

PluginEvents ReadPluginEvents(const EventModel& model) {
  const Trace& trace = model.trace();
  const EventTable& ev = trace.events;
  PluginEvents out;
  out.of_template.reserve(ev.templates().size());
  for (size_t t = 0; t < ev.templates().size(); ++t)
    out.of_template.push_back(
        ClassifyTemplate(trace, ev.templates()[t], model.roles().of_template(t)));

  const auto& templates = ev.template_column();
  for (size_t i = 0; i < ev.size(); ++i)
    if (out.of_template[templates[i]].type != PluginEventType::kNone)
      out.by_start.push_back(static_cast<uint32_t>(i));
  std::stable_sort(out.by_start.begin(), out.by_start.end(),
                   [&](uint32_t a, uint32_t b) { return ev.ts(a) < ev.ts(b); });

  // event_parser.py walks the events by start: device work joins the runtime call of its
  // correlation seen last before it, or, when none came yet, the first one after it.
  const EventIds& ids = model.ids();
  out.runtime_of_work.assign(ids.device_work.size(), kNoIndex);
  for (size_t k = 0; k < ids.device_work.size(); ++k) {
    const uint32_t work = ids.device_work.event[k];
    const PluginEventType type = out.of_template[templates[work]].type;
    if (type != PluginEventType::kKernel && type != PluginEventType::kMemcpy &&
        type != PluginEventType::kMemset)
      continue;
    uint32_t before = kNoIndex, after = kNoIndex;
    for (uint32_t r : model.links().RuntimeCandidates(k)) {
      const uint32_t call = ids.runtime.event[r];
      if (out.of_template[templates[call]].type != PluginEventType::kRuntime) continue;
      if (ev.ts(call) <= ev.ts(work)) {
        if (before == kNoIndex || ev.ts(ids.runtime.event[before]) <= ev.ts(call)) before = r;
      } else if (after == kNoIndex || ev.ts(call) < ev.ts(ids.runtime.event[after])) {
        after = r;
      }
    }
    out.runtime_of_work[k] = before != kNoIndex ? before : after;
  }
  return out;
}

}  // namespace profsh
