// The arguments of torch's operators and memory records that the operator view reads
// (function_events) and TypedArgs does not hold yet: an operator's inputs as the importer keeps
// them (JSON text, which function_events reads into exact values: torch's table prints them with
// Python's str()), its call stack, sequence number and FLOPs, an ITT task's domain, and a memory
// record's bytes and device type. Kept here so that no analysis spells Kineto's names.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/analysis/arg_reader.h"
#include "engine/trace/trace.h"

namespace profsh {

class OperatorArgs {
 public:
  enum class Input : uint8_t {
    kDims,
    kTypes,
    kConcrete
  };  // Input Dims, Input type, Concrete Inputs

  explicit OperatorArgs(const Trace& trace);

  // Whether some event may carry them (the trace has their names at all).
  bool any_inputs() const { return any_inputs_; }
  bool any_call_stack() const { return any_call_stack_; }
  bool any_flops() const { return any_flops_; }

  // Argument-schema constants: the string id of an input's JSON text, of the call stack's text
  // ("file(line): function;..."), of an ITT task's domain; nullopt when the schema has none.
  std::optional<uint32_t> InputJson(uint32_t schema, Input input) const;
  std::optional<uint32_t> CallStack(uint32_t schema) const;
  std::optional<uint32_t> IttDomain(uint32_t schema) const;

  // Per event; false (and *out untouched) when the event does not carry it.
  bool SequenceNumber(ArgRef args, int64_t* out) const { return reader_.GetInt(args, kSeq, out); }
  bool Flops(ArgRef args, int64_t* out) const { return reader_.GetInt(args, kFlops, out); }
  bool MemoryBytes(ArgRef args, int64_t* out) const { return reader_.GetInt(args, kBytes, out); }
  // c10's device type of a memory record: 0 CPU, 1 CUDA, 2 MKLDNN, 5 IDEEP, 6 HIP, ...
  bool MemoryDeviceType(ArgRef args, int64_t* out) const {
    return reader_.GetInt(args, kDeviceType, out);
  }

 private:
  enum Key : size_t {
    kDims,
    kTypes,
    kConcrete,
    kStack,
    kSeq,
    kFlops,
    kDomain,
    kBytes,
    kDeviceType
  };
  std::optional<uint32_t> Constant(uint32_t schema, Key key, ArgType type) const;

  ArgReader reader_;
  bool any_inputs_ = false, any_call_stack_ = false, any_flops_ = false;
};

// Whether some operator carries an argument only torch 2.x's Kineto writes (Record function id
// and Concrete Inputs since 2.1, Input Strides since 2.2).
bool CarriesTorch2OperatorArguments(const Trace& trace);

}  // namespace profsh
