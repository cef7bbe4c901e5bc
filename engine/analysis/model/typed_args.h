// The arguments the analyses read, as typed values: numbers as integers or doubles, an
// operator's input shapes as integer vectors and its dtypes as strings, parsed once per distinct
// value (they are argument-schema constants) rather than as JSON text per event.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/arg_reader.h"
#include "engine/trace/trace.h"

namespace profsh {

// The arguments the analyses know by name (kineto_schema.h spells them).
enum class KnownArg : uint8_t {
  kCorrelation,
  kExternalId,
  kDevice,
  kStream,
  kSequenceNumber,
  kCopyBytes,        // a copy's or set's bytes
  kMemoryBandwidth,  // a copy's or set's GB/s
  kGrid,             // a kernel's grid, JSON text
  kBlock,            // a kernel's block, JSON text
  // A kernel's blocks per SM and estimated achieved occupancy (%), CUPTI's estimates.
  kBlocksPerSm,
  kAchievedOccupancy,
  kCount,
};

// One input of an operator as torch records it in "Input Dims".
struct InputShape {
  enum class Kind : uint8_t {
    kSizes,  // a tensor's sizes; [] for a 0-d tensor or an argument that is not a tensor
    kList,   // a list of tensors: each one's sizes
    kOther,  // anything else torch may write there (a number, null)
  };
  Kind kind = Kind::kSizes;
  std::vector<int64_t> sizes;              // kSizes
  std::vector<std::vector<int64_t>> list;  // kList
  bool operator==(const InputShape&) const = default;
};

// JSON text of "Input Dims" -> its inputs; "Input type" -> its strings (escapes decoded).
std::vector<InputShape> ParseInputShapes(std::string_view json);
std::vector<std::string> ParseStringList(std::string_view json);

class TypedArgs {
 public:
  explicit TypedArgs(const Trace& trace);

  // A number (integers as they are, doubles truncated); nullopt when absent or not a number.
  std::optional<int64_t> Int(size_t event, KnownArg arg) const;
  std::optional<double> Number(size_t event, KnownArg arg) const;
  // A string's text, or a list's or object's JSON text; empty when absent or a number.
  std::string_view Text(size_t event, KnownArg arg) const;
  // The operator's input shapes and dtypes; nullptr when the event has none.
  const std::vector<InputShape>* InputShapes(size_t event) const {
    const uint32_t s = SchemaOf(event);
    return s == kNone || shapes_of_schema_[s] == kNone ? nullptr : &shapes_[shapes_of_schema_[s]];
  }
  const std::vector<std::string>* InputTypes(size_t event) const {
    const uint32_t s = SchemaOf(event);
    return s == kNone || types_of_schema_[s] == kNone ? nullptr : &types_[types_of_schema_[s]];
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t SchemaOf(size_t event) const {
    const uint32_t plus_one = trace_.events.event_template(event).schema_plus_one;
    return plus_one == 0 ? kNone : plus_one - 1;
  }
  const Trace& trace_;
  ArgReader reader_;
  std::vector<uint32_t> shapes_of_schema_, types_of_schema_;  // index into shapes_, types_
  std::vector<std::vector<InputShape>> shapes_;
  std::vector<std::vector<std::string>> types_;
};

}  // namespace profsh
