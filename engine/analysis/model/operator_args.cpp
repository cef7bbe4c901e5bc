#include "engine/analysis/model/operator_args.h"

#include "engine/trace/kineto_schema.h"

namespace profsh {

OperatorArgs::OperatorArgs(const Trace& trace)
    : reader_(trace, {kineto::kInputDims, kineto::kInputType, kineto::kConcreteInputs,
                      kineto::kCallStack, kineto::kSequenceNumber, kineto::kFlops,
                      "domain" /* an ITT task's, as profsh's collector writes it */, kineto::kBytes,
                      kineto::kDeviceType}) {
  auto named = [&](std::string_view name) { return trace.strings.Find(name).has_value(); };
  any_inputs_ =
      named(kineto::kInputDims) || named(kineto::kInputType) || named(kineto::kConcreteInputs);
  any_call_stack_ = named(kineto::kCallStack);
  any_flops_ = named(kineto::kFlops);
}

std::optional<uint32_t> OperatorArgs::Constant(uint32_t schema, Key key, ArgType type) const {
  ArgValue v;
  if (!reader_.GetSchemaConstant(schema, key, &v) || v.type != type) return std::nullopt;
  return v.str;
}

std::optional<uint32_t> OperatorArgs::InputJson(uint32_t schema, Input input) const {
  const Key key = input == Input::kDims ? kDims : input == Input::kTypes ? kTypes : kConcrete;
  return Constant(schema, key, ArgType::kJson);
}

std::optional<uint32_t> OperatorArgs::CallStack(uint32_t schema) const {
  return Constant(schema, kStack, ArgType::kString);
}

std::optional<uint32_t> OperatorArgs::IttDomain(uint32_t schema) const {
  return Constant(schema, kDomain, ArgType::kString);
}

// Schema keys are few (one per distinct argument layout), so this costs nothing next to reading
// the events.
bool CarriesTorch2OperatorArguments(const Trace& trace) {
  static constexpr std::string_view kTorch2Args[] = {
      kineto::kRecordFunctionId, kineto::kConcreteInputs, kineto::kInputStrides};
  for (std::string_view key : kTorch2Args) {
    const auto id = trace.strings.Find(key);
    if (!id) continue;
    for (uint32_t schema = 0; schema < trace.args.schema_count(); ++schema) {
      for (size_t f = 0, n = trace.args.field_count(schema); f < n; ++f) {
        const SchemaField field = trace.args.field(schema, f);
        if (!field.top_level && field.key == *id) return true;
      }
    }
  }
  return false;
}

}  // namespace profsh
