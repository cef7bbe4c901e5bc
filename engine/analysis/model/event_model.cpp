#include "engine/analysis/model/event_model.h"

#include <stdexcept>
#include <string>

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
      generation_(trace.events.generation()),
      roles_(trace),
      ids_(ReadEventIds(trace, roles_)),
      links_(ids_),
      args_(trace) {}

void EventModel::RequireEventsUnchanged(const char* what) const {
  if (trace_.events.generation() != generation_)
    throw std::logic_error(std::string("the event model's ") + what +
                           " was first asked for after the trace's events changed");
}

std::span<const RangeExtent> EventModel::range_extents() const {
  std::call_once(extents_once_, [&] {
    RequireEventsUnchanged("range extents");
    range_extents_ = ExtentsOf(trace_, ids_.ranges);
  });
  return range_extents_;
}

const EventModel::Nesting& EventModel::nesting() const {
  std::call_once(nesting_once_, [&] {
    RequireEventsUnchanged("range nesting");
    const std::span<const RangeExtent> extents = range_extents();
    nesting_.tree = NestRanges(extents);
    nesting_.runtime_innermost =
        InnermostOpenRanges(extents, nesting_.tree, StartsOf(trace_, ids_.runtime));
  });
  return nesting_;
}

void EventModel::EnclosingRanges(size_t runtime, std::vector<uint32_t>* out) const {
  const EventTable& ev = trace_.events;
  OpenRangesAt(
      range_tree(), InnermostRange(runtime), ev.ts(ids_.runtime.event[runtime]),
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
