// The one index of a Trace that the analyses read: each event's role, the ids that tie device
// work to its runtime call and operator (with every candidate), one range tree per track, and
// the arguments as typed values. Built once, when an analysis first asks for it (ModelOf), and
// kept on the trace until its events change.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "engine/analysis/model/event_ids.h"
#include "engine/analysis/model/event_roles.h"
#include "engine/analysis/model/launch_links.h"
#include "engine/analysis/model/range_tree.h"
#include "engine/analysis/model/typed_args.h"
#include "engine/trace/trace.h"

namespace profsh {

class EventModel {
 public:
  explicit EventModel(const Trace& trace);
  EventModel(const EventModel&) = delete;
  EventModel& operator=(const EventModel&) = delete;

  const Trace& trace() const { return trace_; }
  const TemplateRole& role(size_t event) const {
    return roles_.of_template(trace_.events.template_column()[event]);
  }
  const EventRoles& roles() const { return roles_; }
  const EventIds& ids() const { return ids_; }
  const LaunchLinks& links() const { return links_; }
  const TypedArgs& args() const { return args_; }

  // The CPU ranges (EventIds::ranges: operators and annotations), their tree, and the ranges
  // open around each runtime call. Only some views ask for them, so each is made when first
  // asked for, from the trace's times then: a model kept past a change to the trace's events
  // (SharedModelOf) throws std::logic_error if asked for them first after the change.
  std::span<const RangeExtent> range_extents() const;
  const RangeTree& range_tree() const { return nesting().tree; }
  // The innermost CPU range open on runtime call r's track when it started, or kNoIndex.
  uint32_t InnermostRange(size_t runtime) const { return nesting().runtime_innermost[runtime]; }
  // The CPU ranges open on runtime call r's track when it started, outermost first (indexes into
  // EventIds::ranges).
  void EnclosingRanges(size_t runtime, std::vector<uint32_t>* out) const;

 private:
  struct Nesting {
    RangeTree tree;
    std::vector<uint32_t> runtime_innermost;
  };
  const Nesting& nesting() const;
  void RequireEventsUnchanged(const char* what) const;

  const Trace& trace_;
  const uint64_t generation_;
  EventRoles roles_;
  EventIds ids_;
  LaunchLinks links_;
  TypedArgs args_;
  // The lazy parts: the model is shared and const, and any thread may ask first.
  mutable std::once_flag extents_once_, nesting_once_;
  mutable std::vector<RangeExtent> range_extents_;
  mutable Nesting nesting_;
};

// The trace's model, built on first use and shared by every analysis. The reference stays valid
// until the trace's events change or the trace goes.
const EventModel& ModelOf(const Trace& trace);
// The same, for a caller that must keep the model past a change to the trace.
std::shared_ptr<const EventModel> SharedModelOf(const Trace& trace);

}  // namespace profsh
