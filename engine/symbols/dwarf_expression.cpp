#include "engine/symbols/dwarf_expression.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <utility>

namespace profsh::symbols {

std::optional<ExpressionValue> EvaluateExpression(const Dwarf_Op* ops, size_t count,
                                                  const ExpressionContext& context) {
  if (ops == nullptr || count == 0) return std::nullopt;
  // A fixed stack: no allocation per evaluation (the unwinder evaluates several per frame).
  struct Stack {
    uint64_t values[64];
    size_t size = 0;
    bool empty() const { return size == 0; }
    uint64_t& back() { return values[size - 1]; }
    uint64_t& operator[](size_t i) { return values[i]; }
    bool push_back(uint64_t v) {
      if (size == 64) return false;
      values[size++] = v;
      return true;
    }
  } stack;
  bool overflow = false;
  auto push = [&stack, &overflow](uint64_t v) { overflow |= !stack.push_back(v); };
  bool is_location = true;
  auto pop = [&stack](uint64_t* out) {
    if (stack.empty()) return false;
    *out = stack.back();
    --stack.size;
    return true;
  };
  // A branch's operand is a signed byte distance from the end of the branch (1 byte of
  // opcode, 2 of operand); CFI expressions are short, so a linear search finds the target.
  auto jump_to = [ops, count](const Dwarf_Op& branch, size_t* index) {
    const uint64_t byte_offset = branch.offset + 3 + static_cast<int16_t>(branch.number);
    for (size_t i = 0; i < count; ++i) {
      if (ops[i].offset == byte_offset) {
        *index = i;
        return true;
      }
    }
    return false;
  };
  size_t steps = 0;
  for (size_t i = 0; i < count;) {
    if (++steps > 1000) return std::nullopt;  // a loop of branches
    const Dwarf_Op& op = ops[i];
    const uint8_t atom = op.atom;
    size_t next = i + 1;
    uint64_t a = 0, b = 0;
    if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
      push(atom - DW_OP_lit0);
    } else if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
      const auto reg = context.read_register(atom - DW_OP_breg0);
      if (!reg) return std::nullopt;
      push(*reg + op.number);
    } else if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) {
      const auto reg = context.read_register(atom - DW_OP_reg0);
      if (!reg) return std::nullopt;
      push(*reg);
      is_location = false;
    } else {
      switch (atom) {
        case DW_OP_addr:
        case DW_OP_const1u:
        case DW_OP_const2u:
        case DW_OP_const4u:
        case DW_OP_const8u:
        case DW_OP_constu:
        case DW_OP_const1s:
        case DW_OP_const2s:
        case DW_OP_const4s:
        case DW_OP_const8s:
        case DW_OP_consts:
          push(op.number);
          break;
        case DW_OP_bregx: {
          const auto reg = context.read_register(static_cast<unsigned>(op.number));
          if (!reg) return std::nullopt;
          push(*reg + op.number2);
          break;
        }
        case DW_OP_regx: {
          const auto reg = context.read_register(static_cast<unsigned>(op.number));
          if (!reg) return std::nullopt;
          push(*reg);
          is_location = false;
          break;
        }
        case DW_OP_call_frame_cfa:
          if (!context.cfa) return std::nullopt;
          push(*context.cfa);
          break;
        case DW_OP_dup:
          if (stack.empty()) return std::nullopt;
          push(stack.back());
          break;
        case DW_OP_drop:
          if (!pop(&a)) return std::nullopt;
          break;
        case DW_OP_over:
          if (stack.size < 2) return std::nullopt;
          push(stack[stack.size - 2]);
          break;
        case DW_OP_pick:
          if (op.number >= stack.size) return std::nullopt;
          push(stack[stack.size - 1 - op.number]);
          break;
        case DW_OP_swap:
          if (stack.size < 2) return std::nullopt;
          std::swap(stack[stack.size - 1], stack[stack.size - 2]);
          break;
        case DW_OP_rot:
          if (stack.size < 3) return std::nullopt;
          // top three A B C (C on top) become C A B
          std::swap(stack[stack.size - 1], stack[stack.size - 2]);
          std::swap(stack[stack.size - 2], stack[stack.size - 3]);
          break;
        case DW_OP_deref:
        case DW_OP_deref_size: {
          if (!pop(&a)) return std::nullopt;
          const size_t size = atom == DW_OP_deref ? 8 : static_cast<size_t>(op.number);
          if (size == 0 || size > 8) return std::nullopt;
          const auto value = context.read_memory(a, size);
          if (!value) return std::nullopt;
          push(*value);
          break;
        }
        case DW_OP_abs:
          if (!pop(&a)) return std::nullopt;
          push(static_cast<int64_t>(a) < 0 ? -a : a);
          break;
        case DW_OP_neg:
          if (!pop(&a)) return std::nullopt;
          push(-a);
          break;
        case DW_OP_not:
          if (!pop(&a)) return std::nullopt;
          push(~a);
          break;
        case DW_OP_plus_uconst:
          if (!pop(&a)) return std::nullopt;
          push(a + op.number);
          break;
        case DW_OP_and:
        case DW_OP_or:
        case DW_OP_xor:
        case DW_OP_plus:
        case DW_OP_minus:
        case DW_OP_mul:
        case DW_OP_div:
        case DW_OP_mod:
        case DW_OP_shl:
        case DW_OP_shr:
        case DW_OP_shra:
        case DW_OP_eq:
        case DW_OP_ne:
        case DW_OP_lt:
        case DW_OP_le:
        case DW_OP_gt:
        case DW_OP_ge: {
          if (!pop(&b) || !pop(&a)) return std::nullopt;
          const auto sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
          uint64_t r = 0;
          switch (atom) {
            case DW_OP_and:
              r = a & b;
              break;
            case DW_OP_or:
              r = a | b;
              break;
            case DW_OP_xor:
              r = a ^ b;
              break;
            case DW_OP_plus:
              r = a + b;
              break;
            case DW_OP_minus:
              r = a - b;
              break;
            case DW_OP_mul:
              r = a * b;
              break;
            case DW_OP_div:
              if (b == 0 || (sa == INT64_MIN && sb == -1)) return std::nullopt;
              r = static_cast<uint64_t>(sa / sb);
              break;
            case DW_OP_mod:
              if (b == 0) return std::nullopt;
              r = a % b;
              break;
            case DW_OP_shl:
              r = b >= 64 ? 0 : a << b;
              break;
            case DW_OP_shr:
              r = b >= 64 ? 0 : a >> b;
              break;
            case DW_OP_shra:
              r = static_cast<uint64_t>(b >= 64 ? (sa < 0 ? -1 : 0) : sa >> b);
              break;
            case DW_OP_eq:
              r = sa == sb;
              break;
            case DW_OP_ne:
              r = sa != sb;
              break;
            case DW_OP_lt:
              r = sa < sb;
              break;
            case DW_OP_le:
              r = sa <= sb;
              break;
            case DW_OP_gt:
              r = sa > sb;
              break;
            case DW_OP_ge:
              r = sa >= sb;
              break;
          }
          push(r);
          break;
        }
        case DW_OP_skip:
          if (!jump_to(op, &next)) return std::nullopt;
          break;
        case DW_OP_bra:
          if (!pop(&a)) return std::nullopt;
          if (a != 0 && !jump_to(op, &next)) return std::nullopt;
          break;
        case DW_OP_nop:
          break;
        case DW_OP_stack_value:
          is_location = false;
          next = count;
          break;
        default:
          return std::nullopt;
      }
    }
    if (overflow) return std::nullopt;
    i = next;
  }
  if (stack.empty()) return std::nullopt;
  return ExpressionValue{stack.back(), is_location};
}

}  // namespace profsh::symbols
