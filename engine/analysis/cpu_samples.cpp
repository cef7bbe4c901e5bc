#include "engine/analysis/cpu_samples.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "engine/analysis/arg_reader.h"
#include "engine/analysis/event_kind.h"

namespace profsh {

namespace {

// A range of the trace on one track: what a sample can fall inside.
struct OpenRange {
  int64_t begin = 0, end = 0;
  uint32_t name = 0;  // trace string id
  enum Kind : uint8_t { kNvtx, kItt, kOp, kOther } kind = kOther;
};

OpenRange::Kind RangeKind(std::string_view category) {
  if (category == "nvtx") return OpenRange::kNvtx;
  if (category == "itt") return OpenRange::kItt;
  if (KindOfCategory(category) == EventKind::kCpuOp) return OpenRange::kOp;
  return OpenRange::kOther;
}

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
  // The ranges of the sampled threads, by track, in (begin, -end) order so that a range's
  // enclosing ones come before it.
  std::unordered_map<uint32_t, std::vector<OpenRange>> ranges;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.phase(i) != 'X' || !sampled_tracks.count(ev.track(i))) continue;
    const std::string_view category = trace.category_name(ev.category(i));
    if (category == kCpuSampleCategoryName) continue;
    ranges[ev.track(i)].push_back(OpenRange{ev.ts(i), ev.end(i), ev.name(i), RangeKind(category)});
  }
  for (auto& [track, list] : ranges) {
    std::stable_sort(list.begin(), list.end(), [](const OpenRange& a, const OpenRange& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
  }
  std::stable_sort(sample_events.begin(), sample_events.end(), [&](size_t a, size_t b) {
    return ev.track(a) != ev.track(b) ? ev.track(a) < ev.track(b) : ev.ts(a) < ev.ts(b);
  });
  std::unordered_map<uint32_t, uint32_t> local;  // trace string id -> out.strings id
  auto Local = [&](uint32_t id) {
    auto [it, inserted] = local.emplace(id, 0);
    if (inserted) it->second = out.strings.Intern(trace.str(id));
    return it->second;
  };
  out.samples.reserve(sample_events.size());
  uint32_t current_track = UINT32_MAX;
  const std::vector<OpenRange>* list = nullptr;
  size_t next = 0;
  std::vector<const OpenRange*> open;
  std::string path;
  for (size_t i : sample_events) {
    const uint32_t track = ev.track(i);
    const int64_t t = ev.ts(i);
    if (track != current_track) {
      current_track = track;
      auto it = ranges.find(track);
      list = it == ranges.end() ? nullptr : &it->second;
      next = 0;
      open.clear();
    }
    if (list) {
      while (next < list->size() && (*list)[next].begin <= t) {
        const OpenRange& r = (*list)[next++];
        while (!open.empty() && open.back()->end <= r.begin) open.pop_back();
        open.push_back(&r);
      }
    }
    // Ranges that ended before the sample; an enclosing one still open stays.
    std::vector<const OpenRange*> live;
    for (const OpenRange* r : open) {
      if (r->end > t) live.push_back(r);
    }
    CpuSample s;
    s.ts_ns = t;
    s.track = track;
    s.function = Local(ev.name(i));
    ArgValue v;
    if (args.Get(ev.args(i), 0, &v) && v.type == ArgType::kString) s.stack = Local(v.str);
    if (args.Get(ev.args(i), 1, &v) && v.type == ArgType::kString) s.modules = Local(v.str);
    if (args.Get(ev.args(i), 2, &v) && v.type == ArgType::kInt && v.int_value >= 1)
      s.weight = static_cast<uint32_t>(v.int_value);
    path.clear();
    for (const OpenRange* r : live) {
      if (!path.empty()) path += ';';
      path += trace.str(r->name);
      const uint32_t name = Local(r->name);
      s.range = name;
      if (r->kind == OpenRange::kNvtx) s.nvtx = name;
      if (r->kind == OpenRange::kItt) s.itt = name;
      if (r->kind == OpenRange::kOp) s.op = name;
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
  // CPU events of each sampled track, in (start, -end) order.
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_track;
  for (const CpuSample& s : samples.samples) by_track.emplace(s.track, std::vector<uint32_t>{});
  for (size_t i = 0; i < fe.size(); ++i) {
    if (fe.removed(i) || fe.device(i) != DeviceType::kCpu) continue;
    auto it = by_track.find(fe.track(i));
    if (it != by_track.end()) it->second.push_back(static_cast<uint32_t>(i));
  }
  for (auto& [track, list] : by_track) {
    std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      return fe.start_ns(a) != fe.start_ns(b) ? fe.start_ns(a) < fe.start_ns(b)
                                              : fe.end_ns(a) > fe.end_ns(b);
    });
  }
  uint32_t current = UINT32_MAX;
  const std::vector<uint32_t>* list = nullptr;
  size_t next = 0;
  std::vector<uint32_t> open;
  for (const CpuSample& s : samples.samples) {
    if (s.track != current) {
      current = s.track;
      list = &by_track[s.track];
      next = 0;
      open.clear();
    }
    while (next < list->size() && fe.start_ns((*list)[next]) <= s.ts_ns) {
      const uint32_t e = (*list)[next++];
      while (!open.empty() && fe.end_ns(open.back()) <= fe.start_ns(e)) open.pop_back();
      open.push_back(e);
    }
    // The innermost event still open; its ancestors (by the operator nesting) count in total.
    int32_t innermost = -1;
    for (size_t k = open.size(); k-- > 0;) {
      if (fe.end_ns(open[k]) > s.ts_ns) {
        innermost = static_cast<int32_t>(open[k]);
        break;
      }
    }
    if (innermost < 0) continue;
    out.self[static_cast<size_t>(innermost)] += s.weight;
    for (int32_t e = innermost; e >= 0; e = fe.parent(static_cast<size_t>(e)))
      out.total[static_cast<size_t>(e)] += s.weight;
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
