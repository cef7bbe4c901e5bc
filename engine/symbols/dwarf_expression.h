// Evaluates the DWARF expressions that call frame information is made of (the CFA rule, a
// register's saved location or value): a stack machine over the unwound frame's registers,
// the CFA and the memory a snapshot holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include <elfutils/libdw.h>

namespace profsh::symbols {

struct ExpressionContext {
  // DWARF register number -> value; nothing when the frame does not know it.
  std::function<std::optional<uint64_t>(unsigned)> read_register;
  std::function<std::optional<uint64_t>(uint64_t address, size_t size)> read_memory;
  std::optional<uint64_t> cfa;  // for DW_OP_call_frame_cfa
};

struct ExpressionValue {
  uint64_t value = 0;
  bool is_location = true;  // the value is the address holding the result (no stack_value)
};

// Nothing for an empty expression, an operation it does not know, a register or memory it
// cannot read, a stack underflow or a runaway branch.
std::optional<ExpressionValue> EvaluateExpression(const Dwarf_Op* ops, size_t count,
                                                  const ExpressionContext& context);

}  // namespace profsh::symbols
