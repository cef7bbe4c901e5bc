// The gpu_gap rule: a device idle for longer than a threshold between two pieces of its work,
// and what the host did meanwhile: each CPU range's self time inside the gap (its time there
// less its children's), summed by name.
#include <algorithm>
#include <string>
#include <vector>

#include "engine/analysis/tensorboard/recommendations_evidence.h"
#include "engine/analysis/tensorboard/recommendations_rules.h"
#include "engine/util/human_text.h"

namespace profsh::recommendations {

namespace {

struct Gap {
  int64_t device, ts, end;
  int64_t dur() const { return end - ts; }
};

// Per device, the spans between its busy intervals (kernels, copies, sets; all streams merged)
// longer than `threshold`, by start.
std::vector<Gap> DeviceGaps(const EventModel& model, int64_t threshold) {
  const Trace& trace = model.trace();
  const DeviceWorkIds& work = model.ids().device_work;
  struct Busy {
    int64_t device, ts, end;
  };
  std::vector<Busy> busy;
  busy.reserve(work.size());
  for (size_t k = 0; k < work.size(); ++k) {
    const uint32_t e = work.event[k];
    if (model.role(e).work == DeviceWorkKind::kSync) continue;
    busy.push_back({work.device[k], trace.events.ts(e), trace.events.end(e)});
  }
  std::sort(busy.begin(), busy.end(), [](const Busy& a, const Busy& b) {
    return a.device != b.device ? a.device < b.device : a.ts < b.ts;
  });
  std::vector<Gap> gaps;
  for (size_t i = 0; i < busy.size();) {
    const int64_t device = busy[i].device;
    int64_t end = busy[i].end;
    for (++i; i < busy.size() && busy[i].device == device; ++i) {
      if (busy[i].ts - end > threshold) gaps.push_back({device, end, busy[i].ts});
      end = std::max(end, busy[i].end);
    }
  }
  std::sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) { return a.ts < b.ts; });
  return gaps;
}

std::string DeviceName(int64_t device) {
  return device == kNoId ? std::string("the device") : "GPU " + std::to_string(device);
}

}  // namespace

std::optional<Recommendation> GpuGaps(const EventModel& model,
                                      const RecommendationOptions& options) {
  const std::vector<Gap> gaps = DeviceGaps(model, options.gpu_gap_ns);
  if (gaps.empty()) return std::nullopt;
  const Trace& trace = model.trace();

  // The longest gaps get their own account of the host's work.
  constexpr size_t kGapsShown = 3;
  std::vector<size_t> longest(gaps.size());
  for (size_t i = 0; i < gaps.size(); ++i) longest[i] = i;
  std::stable_sort(longest.begin(), longest.end(),
                   [&](size_t a, size_t b) { return gaps[a].dur() > gaps[b].dur(); });
  longest.resize(std::min(longest.size(), kGapsShown));
  std::vector<int> shown_slot(gaps.size(), -1);
  for (size_t s = 0; s < longest.size(); ++s) shown_slot[longest[s]] = static_cast<int>(s);
  std::vector<Tally> shown(longest.size());

  // Gaps of several devices may overlap: the running maximum of their ends finds the first gap
  // that can reach a range's start.
  std::vector<int64_t> max_end(gaps.size());
  for (size_t i = 0; i < gaps.size(); ++i)
    max_end[i] = std::max(gaps[i].end, i ? max_end[i - 1] : INT64_MIN);
  const std::span<const RangeExtent> ranges = model.range_extents();
  const RangeTree& tree = model.range_tree();
  const RangeIds& range_ids = model.ids().ranges;
  auto name_of = [&](uint32_t r) {
    return std::string(trace.str(trace.events.name(range_ids.event[r])));
  };
  Tally during;
  int64_t total_ns = 0;
  for (const Gap& g : gaps) total_ns += g.dur();
  for (uint32_t r = 0; r < ranges.size(); ++r) {
    const RangeExtent& x = ranges[r];
    size_t i = std::upper_bound(max_end.begin(), max_end.end(), x.ts) - max_end.begin();
    for (; i < gaps.size() && gaps[i].ts < x.end; ++i) {
      const int64_t overlap = std::min(x.end, gaps[i].end) - std::max(x.ts, gaps[i].ts);
      if (overlap <= 0) continue;
      // The range's own time there, less what its parent counts as its own.
      const std::string name = name_of(r);
      during.Add(name, overlap, 0);
      if (shown_slot[i] >= 0) shown[shown_slot[i]].Add(name, overlap, 0);
      if (tree.parent[r] != kNoIndex) {
        const std::string parent = name_of(tree.parent[r]);
        during.Add(parent, -overlap, 0);
        if (shown_slot[i] >= 0) shown[shown_slot[i]].Add(parent, -overlap, 0);
      }
    }
  }

  Recommendation rec;
  rec.rule = "gpu_gap";
  rec.time_at_stake_ns = total_ns;
  rec.text = Plural(gaps.size(), "gap", "gaps") + " longer than " + FormatTime(options.gpu_gap_ns) +
             " left the device idle for " + FormatTime(total_ns) +
             " in all, while the host worked on what the evidence lists. Move that work off "
             "the training loop's critical path (DataLoader workers, prefetching, asynchronous "
             "copies), or overlap it with device work.";
  std::string evidence;
  for (size_t s = 0; s < longest.size(); ++s) {
    const Gap& g = gaps[longest[s]];
    if (!evidence.empty()) evidence += "; ";
    evidence += DeviceName(g.device) + " idle " + FormatTime(g.dur()) + " from " +
                FormatTime(g.ts - trace.begin_ns()) + ": ";
    const std::string host = shown[s].Describe(options.evidence_names, false);
    evidence += host.empty() ? "no CPU range open" : "CPU in " + host;
  }
  const std::string all = during.Describe(options.evidence_names, false);
  if (gaps.size() > longest.size() && !all.empty()) evidence += "; all gaps: CPU in " + all;
  rec.evidence = evidence;
  return rec;
}

}  // namespace profsh::recommendations
