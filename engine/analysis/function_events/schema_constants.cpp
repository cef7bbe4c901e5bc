// Names, inputs and stacks are the same for every event of a name or an argument schema, so they
// are worked out once each here, not once per event: the display name (torch's filtered names
// dropped, ProfilerStep#N as ProfilerStep*), the input values read from their JSON text, and the
// call stack split into frames with torch's filtered frames left out.
#include <map>
#include <tuple>
#include <unordered_map>

#include "engine/analysis/function_events/builder.h"
#include "engine/analysis/function_events/torch_filters.h"

namespace profsh {

uint32_t FunctionEventsBuilder::NameOf(uint32_t trace_name, bool* filtered) {
  static constexpr uint32_t kFiltered = UINT32_MAX;
  uint32_t& slot = name_map_[trace_name];
  if (slot == 0) {
    std::string_view s = trace_.str(trace_name);
    if (IsFilteredName(s)) {
      slot = kFiltered;
    } else {
      uint32_t recorded = out_->strings.Intern(s);
      recorded_map_[trace_name] = recorded;
      slot =
          (s.starts_with("ProfilerStep#") ? out_->strings.Intern("ProfilerStep*") : recorded) + 1;
    }
  }
  *filtered = slot == kFiltered;
  return slot - 1;
}

void FunctionEventsBuilder::ResolveSchemaConstants() {
  name_map_.assign(trace_.strings.size(), 0);
  recorded_map_.assign(trace_.strings.size(), 0);
  want_inputs_ = args_.any_inputs();
  want_stacks_ = args_.any_call_stack();
  want_flops_ = args_.any_flops();

  const uint32_t schemas = trace_.args.schema_count();
  if (want_inputs_) schema_inputs_.assign(schemas, 0);
  if (want_stacks_) schema_stack_.assign(schemas, 0);
  // The value of a JSON argument; [] (id 0) when the schema has none.
  auto input_value = [&](uint32_t schema, OperatorArgs::Input input) -> uint32_t {
    const auto text = args_.InputJson(schema, input);
    return text ? out_->inputs.InternJson(*text, trace_.str(*text)) : 0;
  };
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> input_set_ids;
  std::unordered_map<uint32_t, uint32_t> stack_of_text;
  for (uint32_t schema = 0; schema < schemas; ++schema) {
    if (want_inputs_) {
      const FunctionEvents::InputSet set{input_value(schema, OperatorArgs::Input::kDims),
                                         input_value(schema, OperatorArgs::Input::kTypes),
                                         input_value(schema, OperatorArgs::Input::kConcrete)};
      if (!(set == FunctionEvents::InputSet{})) {
        auto [it, inserted] = input_set_ids.emplace(std::tuple(set.shapes, set.types, set.concrete),
                                                    static_cast<uint32_t>(f_.input_sets_.size()));
        if (inserted) f_.input_sets_.push_back(set);
        schema_inputs_[schema] = it->second;
      }
    }
    const auto stack_text = want_stacks_ ? args_.CallStack(schema) : std::nullopt;
    if (stack_text) {
      auto it = stack_of_text.find(*stack_text);
      if (it == stack_of_text.end()) {
        std::vector<uint32_t> frames;
        std::string_view text = trace_.str(*stack_text);
        size_t start = 0;
        while (!text.empty()) {
          size_t semi = text.find(';', start);
          std::string_view frame = text.substr(
              start, semi == std::string_view::npos ? std::string_view::npos : semi - start);
          if (KeepStackFrame(frame)) frames.push_back(out_->strings.Intern(frame));
          if (semi == std::string_view::npos) break;
          start = semi + 1;
        }
        it = stack_of_text.emplace(*stack_text, out_->stacks.Intern(frames)).first;
      }
      schema_stack_[schema] = it->second;
    }
  }
}

}  // namespace profsh
