#include "engine/analysis/model/collective_args.h"

#include "engine/trace/kineto_schema.h"

namespace profsh {

namespace {

// Bytes per element of torch's ScalarType names (c10/core/ScalarType.h); 0 when unknown.
int64_t ScalarTypeBytes(std::string_view dtype) {
  struct Size {
    std::string_view name;
    int64_t bytes;
  };
  static constexpr Size kSizes[] = {{"Byte", 1},
                                    {"Char", 1},
                                    {"Bool", 1},
                                    {"Float8_e5m2", 1},
                                    {"Float8_e4m3fn", 1},
                                    {"Float8_e5m2fnuz", 1},
                                    {"Float8_e4m3fnuz", 1},
                                    {"QInt8", 1},
                                    {"QUInt8", 1},
                                    {"Short", 2},
                                    {"Half", 2},
                                    {"BFloat16", 2},
                                    {"ComplexHalf", 4},
                                    {"Int", 4},
                                    {"Float", 4},
                                    {"QInt32", 4},
                                    {"UInt16", 2},
                                    {"UInt32", 4},
                                    {"UInt64", 8},
                                    {"Long", 8},
                                    {"Double", 8},
                                    {"ComplexFloat", 8},
                                    {"ComplexDouble", 16}};
  for (const Size& s : kSizes)
    if (s.name == dtype) return s.bytes;
  return 0;
}

}  // namespace

CollectiveArgs::CollectiveArgs(const Trace& trace)
    : trace_(trace),
      reader_(trace, {kineto::kProcessGroupName, kineto::kCollectiveName, kineto::kSeq,
                      kineto::kInMsgNelems, kineto::kOutMsgNelems, kineto::kDtype}) {}

std::optional<std::string_view> CollectiveArgs::Text(size_t event, Key key) const {
  ArgValue v;
  if (!reader_.Get(trace_.events.args(event), key, &v) || v.type != ArgType::kString)
    return std::nullopt;
  return trace_.str(v.str);
}

std::optional<int64_t> CollectiveArgs::Seq(size_t event) const {
  ArgValue v;
  if (!reader_.Get(trace_.events.args(event), kSeq, &v) || !v.is_number()) return std::nullopt;
  return v.AsInt();
}

std::optional<int64_t> CollectiveArgs::Bytes(size_t event, Key nelems) const {
  ArgValue n;
  if (!reader_.Get(trace_.events.args(event), nelems, &n) || !n.is_number()) return std::nullopt;
  const std::optional<std::string_view> dtype = Text(event, kDtype);
  if (!dtype) return std::nullopt;
  const int64_t size = ScalarTypeBytes(*dtype);
  if (size == 0 || n.AsInt() < 0) return std::nullopt;
  return n.AsInt() * size;
}

}  // namespace profsh
