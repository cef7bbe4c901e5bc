#include "engine/analysis/cpu_samples.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "engine/analysis/arg_reader.h"
#include "engine/analysis/model/event_model.h"

namespace profsh {

namespace {

std::vector<std::string_view> SplitFrames(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t semi = s.find(';', start);
    if (semi == std::string_view::npos) semi = s.size();
    out.push_back(s.substr(start, semi - start));
    start = semi + 1;
  }
  return out;
}

}  // namespace

bool RangePathHas(std::string_view path, std::string_view name) {
  for (std::string_view r : SplitFrames(path)) {
    if (r == name) return true;
  }
  return false;
}

CpuSamples CollectCpuSamples(const Trace& trace) {
  CpuSamples out;
  out.strings.Intern("");
  uint16_t sample_category = UINT16_MAX;
  for (size_t c = 0; c < trace.categories.size(); ++c) {
    if (trace.category_name(static_cast<uint16_t>(c)) == kCpuSampleCategoryName)
      sample_category = static_cast<uint16_t>(c);
  }
  if (sample_category == UINT16_MAX) return out;
  ArgReader args(trace, {"stack", "modules", "weight"});
  std::vector<size_t> sample_events;
  std::unordered_set<uint32_t> sampled_tracks;
  const EventTable& ev = trace.events;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.category(i) == sample_category && ev.phase(i) == 'i') {
      sample_events.push_back(i);
      sampled_tracks.insert(ev.track(i));
    }
  }
  // The ranges a sample can fall in: every complete event of a sampled thread (runtime calls and
  // Python functions as well as the model's operators and annotations), nested by the model's
  // rule.
  std::vector<RangeExtent> extents;
  std::vector<uint32_t> range_event;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.phase(i) != 'X' || ev.category(i) == sample_category ||
        !sampled_tracks.count(ev.track(i)))
      continue;
    extents.push_back(RangeExtent{ev.ts(i), ev.end(i), ev.track(i)});
    range_event.push_back(static_cast<uint32_t>(i));
  }
  const RangeTree tree = NestRanges(extents);
  std::stable_sort(sample_events.begin(), sample_events.end(), [&](size_t a, size_t b) {
    return ev.track(a) != ev.track(b) ? ev.track(a) < ev.track(b) : ev.ts(a) < ev.ts(b);
  });
  std::vector<TrackInstant> instants;
  instants.reserve(sample_events.size());
  for (size_t i : sample_events) instants.push_back(TrackInstant{ev.ts(i), ev.track(i)});
  const std::vector<uint32_t> innermost = InnermostOpenRanges(extents, tree, instants);
  const EventModel& model = ModelOf(trace);
  std::unordered_map<uint32_t, uint32_t> local;  // trace string id -> out.strings id
  auto Local = [&](uint32_t id) {
    auto [it, inserted] = local.emplace(id, 0);
    if (inserted) it->second = out.strings.Intern(trace.str(id));
    return it->second;
  };
  out.samples.reserve(sample_events.size());
  std::vector<uint32_t> open;
  std::string path;
  for (size_t k = 0; k < sample_events.size(); ++k) {
    const size_t i = sample_events[k];
    const int64_t t = ev.ts(i);
    OpenRangesAt(extents, tree, innermost[k], t, &open);
    CpuSample s;
    s.ts_ns = t;
    s.track = ev.track(i);
    s.function = Local(ev.name(i));
    ArgValue v;
    if (args.Get(ev.args(i), 0, &v) && v.type == ArgType::kString) s.stack = Local(v.str);
    if (args.Get(ev.args(i), 1, &v) && v.type == ArgType::kString) s.modules = Local(v.str);
    if (args.Get(ev.args(i), 2, &v) && v.type == ArgType::kInt && v.int_value >= 1)
      s.weight = static_cast<uint32_t>(v.int_value);
    path.clear();
    for (uint32_t r : open) {
      const uint32_t e = range_event[r];
      if (!path.empty()) path += ';';
      path += trace.str(ev.name(e));
      const uint32_t name = Local(ev.name(e));
      s.range = name;
      const TemplateRole& role = model.role(e);
      if (role.source == AnnotationSource::kNvtx) s.nvtx = name;
      if (role.source == AnnotationSource::kItt) s.itt = name;
      if (role.kind == EventKind::kCpuOp) s.op = name;
    }
    for (char& c : path) {
      if (c == '\n') c = ' ';
    }
    s.range_path = out.strings.Intern(path);
    out.samples.push_back(s);
  }
  return out;
}

EventSampleCounts CountSamplesPerEvent(const Trace& trace, const FunctionEvents& fe) {
  EventSampleCounts out;
  const CpuSamples samples = CollectCpuSamples(trace);
  if (samples.samples.empty()) return out;
  out.self.assign(fe.size(), 0);
  out.total.assign(fe.size(), 0);
  // The CPU events of the sampled tracks; the innermost one open at each sample, by the model's
  // sweep.
  std::unordered_set<uint32_t> sampled_tracks;
  for (const CpuSample& s : samples.samples) sampled_tracks.insert(s.track);
  std::vector<RangeExtent> extents;
  std::vector<uint32_t> event_of;
  for (size_t i = 0; i < fe.size(); ++i) {
    if (fe.removed(i) || fe.device(i) != DeviceType::kCpu || !sampled_tracks.count(fe.track(i)))
      continue;
    extents.push_back(RangeExtent{fe.start_ns(i), fe.end_ns(i), fe.track(i)});
    event_of.push_back(static_cast<uint32_t>(i));
  }
  std::vector<TrackInstant> instants;
  instants.reserve(samples.samples.size());
  for (const CpuSample& s : samples.samples) instants.push_back(TrackInstant{s.ts_ns, s.track});
  const std::vector<uint32_t> innermost =
      InnermostOpenRanges(extents, NestRanges(extents), instants);
  for (size_t k = 0; k < samples.samples.size(); ++k) {
    if (innermost[k] == kNoIndex) continue;
    const uint32_t weight = samples.samples[k].weight;
    const uint32_t event = event_of[innermost[k]];
    out.self[event] += weight;
    // Its ancestors by the operator nesting count in total.
    for (int32_t e = static_cast<int32_t>(event); e >= 0; e = fe.parent(static_cast<size_t>(e)))
      out.total[static_cast<size_t>(e)] += weight;
  }
  return out;
}

Result<std::vector<HotspotRow>> ComputeHotspots(const CpuSamples& samples,
                                                const HotspotOptions& options, uint64_t* kept) {
  struct Acc {
    uint64_t self = 0, total = 0;
    std::string module;
  };
  std::unordered_map<std::string, Acc> acc;
  std::vector<std::string> order;
  *kept = 0;
  std::unordered_set<std::string_view> seen;
  for (const CpuSample& s : samples.samples) {
    const std::string_view path = samples.strings.Get(s.range_path);
    if (!options.range.empty() && !RangePathHas(path, options.range)) continue;
    *kept += s.weight;
    std::vector<std::string_view> items, modules;
    if (options.by == HotspotKey::kRange) {
      if (s.range_path != 0 && !path.empty()) items = SplitFrames(path);
      if (items.empty()) items.push_back("[outside any range]");
    } else {
      items = SplitFrames(samples.strings.Get(s.stack));
      modules = SplitFrames(samples.strings.Get(s.modules));
      if (options.by == HotspotKey::kModule) items = modules;
    }
    seen.clear();
    for (size_t k = 0; k < items.size(); ++k) {
      auto [it, inserted] = acc.emplace(std::string(items[k]), Acc{});
      if (inserted) {
        order.push_back(it->first);
        if (options.by == HotspotKey::kFunction && k < modules.size())
          it->second.module = std::string(modules[k]);
      }
      if (seen.insert(items[k]).second) it->second.total += s.weight;  // recursion counts once
      if (k + 1 == items.size()) it->second.self += s.weight;
    }
  }
  std::vector<HotspotRow> rows;
  rows.reserve(order.size());
  for (const std::string& name : order) {
    const Acc& a = acc[name];
    HotspotRow r;
    r.name = name;
    r.module = a.module;
    r.self = a.self;
    r.total = a.total;
    r.self_pct = *kept ? 100.0 * static_cast<double>(a.self) / static_cast<double>(*kept) : 0;
    r.total_pct = *kept ? 100.0 * static_cast<double>(a.total) / static_cast<double>(*kept) : 0;
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const HotspotRow& a, const HotspotRow& b) {
    return a.self != b.self ? a.self > b.self : a.total > b.total;
  });
  return rows;
}

}  // namespace profsh
