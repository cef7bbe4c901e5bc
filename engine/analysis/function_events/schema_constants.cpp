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
  want_inputs_ = trace_.strings.Find(kineto::kInputDims).has_value() ||
                 trace_.strings.Find(kineto::kInputType).has_value() ||
                 trace_.strings.Find(kineto::kConcreteInputs).has_value();
  want_stacks_ = trace_.strings.Find(kineto::kCallStack).has_value();
  want_flops_ = trace_.strings.Find(kineto::kFlops).has_value();

  const uint32_t schemas = trace_.args.schema_count();
  if (want_inputs_) schema_inputs_.assign(schemas, 0);
  if (want_stacks_) schema_stack_.assign(schemas, 0);
  // The value of a JSON argument; [] (id 0) when the schema has none.
  auto input_value = [&](uint32_t schema, Key key) -> uint32_t {
    ArgValue v;
    if (!reader_.GetSchemaConstant(schema, key, &v) || v.type != ArgType::kJson) return 0;
    return out_->inputs.InternJson(v.str, trace_.str(v.str));
  };
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> input_set_ids;
  std::unordered_map<uint32_t, uint32_t> stack_of_text;
  for (uint32_t schema = 0; schema < schemas; ++schema) {
    if (want_inputs_) {
      const FunctionEvents::InputSet set{input_value(schema, kInputDims),
                                         input_value(schema, kInputType),
                                         input_value(schema, kConcreteInputs)};
      if (!(set == FunctionEvents::InputSet{})) {
        auto [it, inserted] = input_set_ids.emplace(std::tuple(set.shapes, set.types, set.concrete),
                                                    static_cast<uint32_t>(f_.input_sets_.size()));
        if (inserted) f_.input_sets_.push_back(set);
        schema_inputs_[schema] = it->second;
      }
    }
    ArgValue v;
    if (want_stacks_ && reader_.GetSchemaConstant(schema, kCallStack, &v) &&
        v.type == ArgType::kString) {
      auto it = stack_of_text.find(v.str);
      if (it == stack_of_text.end()) {
        std::vector<uint32_t> frames;
        std::string_view text = trace_.str(v.str);
        size_t start = 0;
        while (!text.empty()) {
          size_t semi = text.find(';', start);
          std::string_view frame = text.substr(
              start, semi == std::string_view::npos ? std::string_view::npos : semi - start);
          if (KeepStackFrame(frame)) frames.push_back(out_->strings.Intern(frame));
          if (semi == std::string_view::npos) break;
          start = semi + 1;
        }
        it = stack_of_text.emplace(v.str, out_->stacks.Intern(frames)).first;
      }
      schema_stack_[schema] = it->second;
    }
  }
}

}  // namespace profsh
