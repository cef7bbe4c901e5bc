#include "engine/report/timeline_overview.h"

#include <algorithm>
#include <numeric>

namespace profsh::report {

namespace {

// "name [pid 12]": processes of one name (Kineto names every device's after the program) stay
// apart; "pid 12" when unnamed.
std::string IdentLabel(const Trace& t, const Ident& id, uint32_t name, const char* kind) {
  const std::string ident = std::string(kind) + " " + t.FormatIdent(id);
  if (name == 0 || t.str(name).empty() || t.str(name) == t.FormatIdent(id)) return ident;
  return std::string(t.str(name)) + " [" + ident + "]";
}

}  // namespace

Timeline BuildTimelineOverview(const Trace& trace, size_t buckets, size_t max_lanes) {
  Timeline out;
  out.start_ns = trace.begin_ns();
  out.end_ns = trace.end_ns();
  const size_t tracks = trace.tracks.size();
  std::vector<TimelineLane> lanes(tracks);
  std::vector<int64_t> covered_until(tracks, INT64_MIN);
  const double span = std::max<int64_t>(1, out.end_ns - out.start_ns);
  const double bucket_ns = span / static_cast<double>(buckets);
  for (auto& lane : lanes) lane.busy.assign(buckets, 0.0f);
  const EventTable& events = trace.events;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events.phase(i) == 'M') continue;  // names and sort orders: not activity
    const uint32_t track = events.track(i);
    TimelineLane& lane = lanes[track];
    const int64_t ts = events.ts(i), end = events.end(i);
    if (lane.events == 0 || ts < lane.first_ns) lane.first_ns = ts;
    lane.last_ns = std::max(lane.last_ns, end);
    ++lane.events;
    if (events.phase(i) != 'X') continue;
    // Nested ranges count once: only what lies past what this track already covered.
    const int64_t from = std::max(ts, covered_until[track]);
    if (end <= from) continue;
    covered_until[track] = end;
    lane.busy_ns += end - from;
    double a = (from - out.start_ns) / bucket_ns, b = (end - out.start_ns) / bucket_ns;
    for (size_t k = static_cast<size_t>(std::max(0.0, a)); k < buckets && k < b; ++k) {
      const double overlap = std::min<double>(b, k + 1) - std::max<double>(a, k);
      if (overlap > 0) lane.busy[k] = std::min(1.0f, lane.busy[k] + static_cast<float>(overlap));
    }
  }
  // In the trace's order (processes, then their threads), the busiest max_lanes kept.
  std::vector<uint32_t> order;
  for (const ProcessInfo& p : trace.processes()) {
    for (uint32_t track : p.tracks) {
      if (lanes[track].events == 0) continue;
      lanes[track].process = IdentLabel(trace, p.pid, p.name, "pid");
      lanes[track].thread =
          IdentLabel(trace, trace.tracks[track].tid, trace.thread(track).name, "tid");
      order.push_back(track);
    }
  }
  if (order.size() > max_lanes) {
    std::vector<uint32_t> busiest = order;
    std::stable_sort(busiest.begin(), busiest.end(),
                     [&](uint32_t a, uint32_t b) { return lanes[a].busy_ns > lanes[b].busy_ns; });
    busiest.resize(max_lanes);
    std::vector<bool> keep(tracks, false);
    for (uint32_t k : busiest) keep[k] = true;
    out.lanes_left_out = order.size() - max_lanes;
    std::erase_if(order, [&](uint32_t k) { return !keep[k]; });
  }
  for (uint32_t k : order) out.lanes.push_back(std::move(lanes[k]));
  return out;
}

}  // namespace profsh::report
