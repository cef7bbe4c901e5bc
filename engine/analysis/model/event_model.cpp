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
    : trace_(trace),
      roles_(trace),
      ids_(ReadEventIds(trace, roles_)),
      range_extents_(ExtentsOf(trace, ids_.ranges)),
      range_tree_(NestRanges(range_extents_)),
      links_(ids_, range_extents_, range_tree_, StartsOf(trace, ids_.runtime)),
      args_(trace) {}

void EventModel::EnclosingRanges(size_t runtime, std::vector<uint32_t>* out) const {
  OpenRangesAt(range_extents_, range_tree_, links_.InnermostRange(runtime),
               trace_.events.ts(ids_.runtime.event[runtime]), out);
}

std::shared_ptr<const EventModel> SharedModelOf(const Trace& trace) {
  return trace.derived.Get<EventModel>(&kModelTag, trace.events.generation(),
                                       [&] { return std::make_shared<const EventModel>(trace); });
}

const EventModel& ModelOf(const Trace& trace) {
  return *SharedModelOf(trace);
}

}  // namespace profsh
