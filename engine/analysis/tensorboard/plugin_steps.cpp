#include "engine/analysis/tensorboard/plugin_steps.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace profsh {

namespace {

constexpr int64_t kNoStart = std::numeric_limits<int64_t>::max();
constexpr int64_t kNoEnd = std::numeric_limits<int64_t>::min();

// The External ids of the collectives (event_parser.py's communication_data keys): a kernel with
// one of them is communication, not computation.
std::unordered_set<int64_t> CollectiveExternalIds(const EventModel& model,
                                                  const PluginEvents& events) {
  std::unordered_set<int64_t> ids;
  const RangeIds& ranges = model.ids().ranges;
  for (size_t k = 0; k < ranges.size(); ++k) {
    const PluginTemplate& p = events.of(model.trace(), ranges.event[k]);
    const bool operator_like = p.type == PluginEventType::kOperator ||
                               p.type == PluginEventType::kUserAnnotation ||
                               p.type == PluginEventType::kPython;
    if (operator_like && p.collective && ranges.external[k] != kNoId)
      ids.insert(ranges.external[k]);
  }
  return ids;
}

struct DeviceSteps {
  std::vector<Interval> device;  // each step's device work span, {kNoStart, kNoEnd} without any
  std::vector<size_t> matched;   // device work launched inside each step
  bool any_matched = false;
  int64_t previous_end = 0;  // where the first step may start at the earliest
};

// _find_device_steps: the runtime calls by start, each inside a step's host span, give that step
// their device work. A call that starts before the step or ends after it is skipped.
DeviceSteps FindDeviceSteps(const EventModel& model, const PluginEvents& events,
                            const std::vector<Interval>& steps) {
  const EventTable& ev = model.trace().events;
  const EventIds& ids = model.ids();
  std::vector<std::vector<uint32_t>> work_of_runtime(ids.runtime.size());
  std::vector<uint32_t> plugin_work;  // device work the plugin types (indexes into device_work)
  for (size_t k = 0; k < ids.device_work.size(); ++k) {
    const PluginEventType t = events.of(model.trace(), ids.device_work.event[k]).type;
    if (t != PluginEventType::kKernel && t != PluginEventType::kMemcpy &&
        t != PluginEventType::kMemset)
      continue;
    plugin_work.push_back(static_cast<uint32_t>(k));
    if (events.runtime_of_work[k] != kNoIndex)
      work_of_runtime[events.runtime_of_work[k]].push_back(static_cast<uint32_t>(k));
  }
  std::vector<uint32_t> calls;  // indexes into ids.runtime, by start
  for (size_t r = 0; r < ids.runtime.size(); ++r)
    if (events.of(model.trace(), ids.runtime.event[r]).type == PluginEventType::kRuntime)
      calls.push_back(static_cast<uint32_t>(r));
  std::stable_sort(calls.begin(), calls.end(), [&](uint32_t a, uint32_t b) {
    return ev.ts(ids.runtime.event[a]) < ev.ts(ids.runtime.event[b]);
  });

  DeviceSteps out;
  out.device.assign(steps.size(), {kNoStart, kNoEnd});
  out.matched.assign(steps.size(), 0);
  std::vector<bool> matched_work(ids.device_work.size(), false);
  size_t step = 0, call = 0;
  Interval device{kNoStart, kNoEnd};
  while (step < steps.size() && call < calls.size()) {
    const uint32_t e = ids.runtime.event[calls[call]];
    if (ev.ts(e) < steps[step].ts) {
      ++call;
    } else if (ev.end(e) <= steps[step].end) {
      for (uint32_t k : work_of_runtime[calls[call]]) {
        const uint32_t w = ids.device_work.event[k];
        device.ts = std::min(device.ts, ev.ts(w));
        device.end = std::max(device.end, ev.end(w));
        matched_work[k] = true;
        ++out.matched[step];
        out.any_matched = true;
      }
      ++call;
    } else if (ev.ts(e) < steps[step].end) {
      ++call;
    } else {
      out.device[step++] = device;
      device = {kNoStart, kNoEnd};
    }
  }
  while (step < steps.size()) {
    out.device[step++] = device;
    device = {kNoStart, kNoEnd};
  }
  // The first step starts no earlier than the end of device work launched before any step and
  // finished before the first step's device work began.
  if (out.any_matched && !steps.empty()) {
    out.previous_end = steps.front().ts;
    if (out.device.front().ts != kNoStart)
      for (uint32_t k : plugin_work) {
        const uint32_t w = ids.device_work.event[k];
        if (!matched_work[k] && ev.end(w) < out.device.front().ts)
          out.previous_end = std::max(out.previous_end, ev.end(w));
      }
  }
  return out;
}

// _update_steps_duration: each step from the previous one's end (or its own start) to the later
// of its host end and its device work's end; then the trailing steps without device work go, and
// the last one with some too when it has under 80 % of the one before's.
void WidenToDevice(const DeviceSteps& device, PluginSteps* out) {
  out->uses_gpu = device.any_matched;
  if (!out->uses_gpu) return;
  int64_t previous_end = device.previous_end;
  for (size_t i = 0; i < out->steps.size(); ++i) {
    const int64_t start = std::max(previous_end, out->steps[i].ts);
    int64_t end = out->steps[i].end;
    if (device.device[i].ts == kNoStart) {
      end = std::max(end, start);
    } else {
      end = std::max(end, device.device[i].end);
      if (end < start) end = start;
    }
    out->steps[i] = {start, end};
    previous_end = end;
  }
  if (out->steps.size() <= 1) return;
  size_t keep = out->steps.size();
  size_t last = out->steps.size();
  while (last > 0 && device.matched[last - 1] == 0) --last;
  if (last == 0) return;  // unreachable while some step launched device work
  keep = last;
  const size_t i = last - 1;
  if (i > 0 &&
      static_cast<double>(device.matched[i - 1]) * 0.8 > static_cast<double>(device.matched[i]))
    keep = i;
  out->dropped_steps = out->steps.size() - keep;
  out->steps.resize(keep);
  out->names.resize(keep);
}

}  // namespace

PluginSteps ComputePluginSteps(const EventModel& model, const PluginEvents& events) {
  const Trace& trace = model.trace();
  const EventTable& ev = trace.events;
  const std::unordered_set<int64_t> collectives = CollectiveExternalIds(model, events);
  // External ids of device work, by event (device work is few next to the trace).
  std::unordered_map<uint32_t, int64_t> work_external;
  for (size_t k = 0; k < model.ids().device_work.size(); ++k)
    work_external.emplace(model.ids().device_work.event[k], model.ids().device_work.external[k]);

  PluginSteps out;
  auto add = [&](StepCategory c, uint32_t e) {
    out.busy[static_cast<size_t>(c)].push_back({ev.ts(e), ev.end(e)});
  };
  int64_t cpu_begin = kNoStart, cpu_end = kNoEnd;
  using T = PluginEventType;
  for (uint32_t e : events.by_start) {
    const PluginTemplate& p = events.of(trace, e);
    switch (p.type) {
      case T::kKernel: {
        auto it = work_external.find(e);
        const bool collective =
            it != work_external.end() && it->second != kNoId && collectives.count(it->second) > 0;
        add(collective ? StepCategory::kCommunication : StepCategory::kKernel, e);
        break;
      }
      case T::kMemcpy:
        add(StepCategory::kMemcpy, e);
        break;
      case T::kMemset:
        add(StepCategory::kMemset, e);
        break;
      case T::kRuntime:
        add(StepCategory::kRuntime, e);
        break;
      case T::kOperator:
      case T::kUserAnnotation:
      case T::kPython:
        if (p.dataloader) {
          add(StepCategory::kDataLoader, e);
        } else if (p.step) {
          out.steps.push_back({ev.ts(e), ev.end(e)});
          out.names.push_back(std::to_string(p.step_number));
        } else {
          add(p.collective ? StepCategory::kCommunication : StepCategory::kCpuExec, e);
        }
        break;
      default:
        break;
    }
    // The host's span: operators, Python ranges and steps (not other user annotations).
    if (p.type == T::kOperator || p.type == T::kPython || p.step) {
      cpu_begin = std::min(cpu_begin, ev.ts(e));
      cpu_end = std::max(cpu_end, ev.end(e));
    }
  }
  out.has_profiler_steps = !out.steps.empty();
  if (out.steps.empty() && cpu_begin <= cpu_end) {
    out.steps.push_back({cpu_begin, cpu_end});
    out.names.push_back("0");
  }
  for (auto& busy : out.busy) busy = MergeIntervals(std::move(busy));
  if (out.steps.empty()) return out;
  WidenToDevice(FindDeviceSteps(model, events, out.steps), &out);
  return out;
}

}  // namespace profsh
