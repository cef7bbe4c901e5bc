#include "engine/analysis/model/forward_backward_flows.h"

#include <optional>
#include <unordered_map>

#include "engine/trace/kineto_schema.h"

namespace profsh {

std::vector<ForwardBackwardFlow> ForwardBackwardFlows(const Trace& trace) {
  std::vector<ForwardBackwardFlow> flows;
  const std::optional<uint32_t> id_key = trace.strings.Find(kineto::kFlowId);
  if (!id_key) return flows;
  std::unordered_map<int64_t, TrackPlace> starts;
  std::vector<std::pair<int64_t, TrackPlace>> finishes;
  const EventTable& ev = trace.events;
  // 's' or 'f' for the templates of fwdbwd flow ends, 0 for the others: decided once each.
  std::vector<char> end_of_template;
  end_of_template.reserve(ev.templates().size());
  for (const EventTemplate& t : ev.templates()) {
    const char ph = EventTable::PhaseOf(t.kind);
    const bool flow = (ph == 's' || ph == 'f') &&
                      trace.category_name(EventTable::CategoryOf(t.kind)) == kineto::kFwdBwd;
    end_of_template.push_back(flow ? ph : 0);
  }
  const auto& template_column = ev.template_column();
  for (size_t i = 0; i < ev.size(); ++i) {
    const char ph = end_of_template[template_column[i]];
    if (ph == 0) continue;
    // The flow's id is a field of the event, beside "args".
    ArgValue id;
    if (!trace.args.Get(ev.args(i)).Find(*id_key, &id, true) ||
        (id.type != ArgType::kInt && id.type != ArgType::kUInt))
      continue;
    const TrackPlace place{ev.track(i), ev.ts(i)};
    if (ph == 's') {
      starts[id.int_value] = place;
    } else {
      finishes.emplace_back(id.int_value, place);
    }
  }
  for (const auto& [id, place] : finishes) {
    auto it = starts.find(id);
    if (it != starts.end()) flows.push_back({it->second, place});
  }
  return flows;
}

}  // namespace profsh
