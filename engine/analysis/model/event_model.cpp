#include "engine/analysis/model/event_model.h"

namespace profsh {

namespace {

// The model's slot in Trace::derived: this tag's address.
constexpr char kModelTag = 0;

std::vector<RangeExtent> ExtentsOf(const Trace& trace, const RangeIds& ranges) {
  std::vector<RangeExtent> out(ranges.size());
  for (size_t r = 0; r < ranges.size(); ++r) {
    const uint32_t e = ranges.event[r];
    out[r] = {trace.events.ts(e), trace.events.end(e), trace.events.track(e)};
  }
  return out;
}

std::vector<TrackInstant> StartsOf(const Trace& trace, const RuntimeIds& runtime) {
  std::vector<TrackInstant> out(runtime.size());
  for (size_t r = 0; r < runtime.size(); ++r) {
    const uint32_t e = runtime.event[r];
    out[r] = {trace.events.ts(e), trace.events.track(e)};
  }
  return out;
}

}  // namespace

EventModel::EventModel(const Trace& trace)
    : trace_(trace), roles_(trace), ids_(ReadEventIds(trace, roles_)), args_(trace) {
  // The extents are the trace's own times: kept only while the tree and links are built.
  const std::vector<RangeExtent> extents = ExtentsOf(trace, ids_.ranges);
  range_tree_ = NestRanges(extents);
  links_ = LaunchLinks(ids_, extents, range_tree_, StartsOf(trace, ids_.runtime));
}

std::span<const RangeExtent> EventModel::range_extents() const {
  std::call_once(extents_once_, [&] { range_extents_ = ExtentsOf(trace_, ids_.ranges); });
  return range_extents_;
}

void EventModel::EnclosingRanges(size_t runtime, std::vector<uint32_t>* out) const {
  const EventTable& ev = trace_.events;
  OpenRangesAt(
      range_tree_, links_.InnermostRange(runtime), ev.ts(ids_.runtime.event[runtime]),
      [&](uint32_t r) { return ev.end(ids_.ranges.event[r]); }, out);
}

std::shared_ptr<const EventModel> SharedModelOf(const Trace& trace) {
  return trace.derived.Get<EventModel>(&kModelTag, trace.events.generation(),
                                       [&] { return std::make_shared<const EventModel>(trace); });
}

const EventModel& ModelOf(const Trace& trace) {
  return *SharedModelOf(trace);
}

}  // namespace profsh
