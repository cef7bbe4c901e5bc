#include "engine/serve/timeline_lod.h"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "engine/report/escape.h"

namespace profsh::serve {

using report::EscapeHtml;
using report::JsonString;
using report::PercentEncodePath;

namespace {

std::string LaneLabel(const Trace& trace, uint32_t track,
                      const std::unordered_map<uint32_t, const ProcessInfo*>& process_of) {
  std::string label;
  auto it = process_of.find(track);
  if (it != process_of.end() && it->second->name != 0)
    label = std::string(trace.str(it->second->name)) + " ";
  label += trace.FormatIdent(trace.tracks[track].pid) + " / ";
  uint32_t thread_name = trace.thread(track).name;
  label += thread_name != 0 ? std::string(trace.str(thread_name))
                            : trace.FormatIdent(trace.tracks[track].tid);
  return label;
}

}  // namespace

TimelineIndex BuildTimelineIndex(const Trace& trace) {
  TimelineIndex index;
  index.begin_ns = trace.begin_ns();
  index.end_ns = trace.end_ns();
  const EventTable& events = trace.events;
  std::vector<int32_t> lane_of(trace.tracks.size(), -1);
  for (size_t i = 0; i < events.size(); ++i) {
    if (events.phase(i) != 'X') continue;
    uint32_t track = events.track(i);
    if (lane_of[track] < 0) {
      lane_of[track] = static_cast<int32_t>(index.lanes.size());
      index.lanes.push_back(TimelineIndex::Lane{track, {}, {}, {}, 0, 0});
    }
    index.lanes[lane_of[track]].events.push_back(static_cast<uint32_t>(i));
  }
  std::unordered_map<uint32_t, const ProcessInfo*> process_of;
  for (const ProcessInfo& p : trace.processes())
    for (uint32_t t : p.tracks) process_of[t] = &p;
  // Lanes in the order Perfetto shows them: process order, then each process's tracks.
  std::vector<int> order(trace.tracks.size(), INT32_MAX);
  int position = 0;
  for (const ProcessInfo& p : trace.processes())
    for (uint32_t t : p.tracks) order[t] = position++;
  std::sort(index.lanes.begin(), index.lanes.end(),
            [&](const auto& a, const auto& b) { return order[a.track] < order[b.track]; });
  for (TimelineIndex::Lane& lane : index.lanes) {
    lane.label = LaneLabel(trace, lane.track, process_of);
    std::sort(lane.events.begin(), lane.events.end(), [&](uint32_t a, uint32_t b) {
      int64_t ta = events.ts(a), tb = events.ts(b);
      return ta != tb ? ta < tb : events.dur(a) > events.dur(b);
    });
    lane.depth.resize(lane.events.size());
    std::vector<int64_t> open_ends;
    for (size_t k = 0; k < lane.events.size(); ++k) {
      uint32_t e = lane.events[k];
      while (!open_ends.empty() && open_ends.back() <= events.ts(e)) open_ends.pop_back();
      int depth = std::min<int>(static_cast<int>(open_ends.size()), kMaxDepth);
      lane.depth[k] = static_cast<uint8_t>(depth);
      lane.max_depth = std::max(lane.max_depth, depth);
      lane.longest_ns = std::max(lane.longest_ns, events.dur(e));
      open_ends.push_back(events.end(e));
    }
  }
  return index;
}

std::string TimelineJson(const Trace& trace, const TimelineIndex& index, const TimelineQuery& q) {
  const EventTable& events = trace.events;
  const int64_t ns_per_px = std::max<int64_t>(1, (q.t1 - q.t0) / std::max(1, q.width_px));
  std::unordered_map<uint32_t, uint32_t> name_index;
  std::vector<uint32_t> names;
  size_t scanned = 0;
  std::string lanes_json;
  struct Block {
    int64_t begin = 0, end = 0, count = 0;
  };
  for (const TimelineIndex::Lane& lane : index.lanes) {
    std::string slices, blocks;
    std::array<Block, kMaxDepth + 1> open{};
    auto flush = [&](int depth) {
      Block& b = open[depth];
      if (b.count == 0) return;
      if (!blocks.empty()) blocks += ',';
      blocks += "[" + std::to_string(b.begin) + "," + std::to_string(b.end - b.begin) + "," +
                std::to_string(depth) + "," + std::to_string(b.count) + "]";
      b = Block{};
    };
    // A slice that starts before t0 can reach into the range only if it starts within the
    // lane's longest duration of it.
    auto first = std::lower_bound(lane.events.begin(), lane.events.end(), q.t0 - lane.longest_ns,
                                  [&](uint32_t e, int64_t t) { return events.ts(e) < t; });
    for (auto it = first; it != lane.events.end(); ++it) {
      uint32_t e = *it;
      int64_t ts = events.ts(e), dur = events.dur(e);
      if (ts >= q.t1) break;
      ++scanned;
      if (ts + dur < q.t0) continue;
      int depth = lane.depth[static_cast<size_t>(it - lane.events.begin())];
      if (dur >= ns_per_px) {
        auto [slot, added] = name_index.try_emplace(events.name(e), names.size());
        if (added) names.push_back(events.name(e));
        if (!slices.empty()) slices += ',';
        slices += "[" + std::to_string(ts) + "," + std::to_string(dur) + "," +
                  std::to_string(depth) + "," + std::to_string(slot->second) + "]";
        continue;
      }
      Block& b = open[depth];
      // A block stays about a pixel wide: a gap of a pixel, or a pixel's worth of starts, ends it.
      if (b.count > 0 && (ts > b.end + ns_per_px || ts >= b.begin + ns_per_px)) flush(depth);
      if (b.count == 0) b.begin = ts;
      b.end = std::max(b.end, ts + dur);
      ++b.count;
    }
    for (int d = 0; d <= kMaxDepth; ++d) flush(d);
    if (!lanes_json.empty()) lanes_json += ',';
    lanes_json += "{\"label\":" + JsonString(lane.label) +
                  ",\"max_depth\":" + std::to_string(lane.max_depth) + ",\"slices\":[" + slices +
                  "],\"blocks\":[" + blocks + "]}";
  }
  std::string out = "{\"begin\":" + std::to_string(index.begin_ns) +
                    ",\"end\":" + std::to_string(index.end_ns) + ",\"t0\":" + std::to_string(q.t0) +
                    ",\"t1\":" + std::to_string(q.t1) +
                    ",\"ns_per_px\":" + std::to_string(ns_per_px) +
                    ",\"scanned\":" + std::to_string(scanned) + ",\"names\":[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += JsonString(trace.str(names[i]));
  }
  out += "],\"lanes\":[" + lanes_json + "]}";
  return out;
}

}  // namespace profsh::serve
