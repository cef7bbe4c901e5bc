#include "engine/analysis/model/typed_args.h"

#include <unordered_map>

#include "engine/trace/kineto_schema.h"
#include "engine/util/json_cursor.h"

namespace profsh {

namespace {

// The sizes in a list of numbers; false when an item is not an integer.
bool ReadSizes(json::Cursor& in, std::vector<int64_t>* sizes, bool* nested) {
  bool ok = true;
  const bool list = in.List([&] {
    if (in.Peek() == '[') {
      *nested = true;
      in.Skip();
      return;
    }
    auto v = in.Int();
    if (v)
      sizes->push_back(*v);
    else
      ok = false;
  });
  return list && ok;
}

}  // namespace

std::vector<InputShape> ParseInputShapes(std::string_view json) {
  std::vector<InputShape> inputs;
  json::Cursor in(json);
  in.List([&] {
    InputShape shape;
    if (in.Peek() != '[') {
      shape.kind = InputShape::Kind::kOther;
      in.Skip();
      inputs.push_back(std::move(shape));
      return;
    }
    // A tensor's sizes, or a list whose items are lists (a tensor list): read it twice over is
    // not possible with one reader, so look at the first item.
    json::Cursor probe = in;
    probe.Consume('[');
    if (probe.Peek() == '[') {
      shape.kind = InputShape::Kind::kList;
      bool ok = in.List([&] {
        std::vector<int64_t> sizes;
        bool nested = false;
        if (!ReadSizes(in, &sizes, &nested) || nested) shape.kind = InputShape::Kind::kOther;
        shape.list.push_back(std::move(sizes));
      });
      if (!ok) shape.kind = InputShape::Kind::kOther;
      if (shape.kind == InputShape::Kind::kOther) shape.list.clear();
    } else {
      bool nested = false;
      if (!ReadSizes(in, &shape.sizes, &nested) || nested) {
        shape.kind = InputShape::Kind::kOther;
        shape.sizes.clear();
      }
    }
    inputs.push_back(std::move(shape));
  });
  return inputs;
}

std::vector<std::string> ParseStringList(std::string_view json) {
  std::vector<std::string> out;
  json::Cursor in(json);
  in.List([&] {
    std::optional<std::string> item = in.String();
    if (!item) in.Skip();
    out.push_back(item.value_or(""));
  });
  return out;
}

TypedArgs::TypedArgs(const Trace& trace)
    : trace_(trace),
      reader_(
          trace,
          {kineto::kCorrelation, kineto::kExternalId, kineto::kDevice, kineto::kStream,
           kineto::kSequenceNumber, kineto::kCopyBytes, kineto::kMemoryBandwidth, kineto::kGrid,
           kineto::kBlock, kineto::kBlocksPerSm, kineto::kAchievedOccupancy, kineto::kWaitOnStream,
           kineto::kWaitOnEventRecordCorrelation, kineto::kInputDims, kineto::kInputType}) {
  static_assert(static_cast<size_t>(KnownArg::kCount) == 13);
  constexpr size_t kDims = 13, kTypes = 14;  // after the KnownArgs in the reader's keys
  const uint32_t schemas = trace.args.schema_count();
  shapes_of_schema_.assign(schemas, kNone);
  types_of_schema_.assign(schemas, kNone);
  // Shapes and dtypes are schema constants: each distinct text is parsed once.
  std::unordered_map<uint32_t, uint32_t> shapes_of_text, types_of_text;
  for (uint32_t schema = 0; schema < schemas; ++schema) {
    ArgValue v;
    if (reader_.GetSchemaConstant(schema, kDims, &v) && v.type == ArgType::kJson) {
      auto [it, added] = shapes_of_text.try_emplace(v.str, static_cast<uint32_t>(shapes_.size()));
      if (added) shapes_.push_back(ParseInputShapes(trace.str(v.str)));
      shapes_of_schema_[schema] = it->second;
    }
    if (reader_.GetSchemaConstant(schema, kTypes, &v) && v.type == ArgType::kJson) {
      auto [it, added] = types_of_text.try_emplace(v.str, static_cast<uint32_t>(types_.size()));
      if (added) types_.push_back(ParseStringList(trace.str(v.str)));
      types_of_schema_[schema] = it->second;
    }
  }
}

std::optional<int64_t> TypedArgs::Int(size_t event, KnownArg arg) const {
  int64_t v;
  if (reader_.GetInt(trace_.events.args(event), static_cast<size_t>(arg), &v)) return v;
  return std::nullopt;
}

std::optional<double> TypedArgs::Number(size_t event, KnownArg arg) const {
  ArgValue v;
  if (reader_.Get(trace_.events.args(event), static_cast<size_t>(arg), &v) && v.is_number())
    return v.AsDouble();
  return std::nullopt;
}

std::string_view TypedArgs::Text(size_t event, KnownArg arg) const {
  ArgValue v;
  if (!reader_.Get(trace_.events.args(event), static_cast<size_t>(arg), &v)) return {};
  if (v.type == ArgType::kString || v.type == ArgType::kJson) return trace_.str(v.str);
  return {};
}

}  // namespace profsh
