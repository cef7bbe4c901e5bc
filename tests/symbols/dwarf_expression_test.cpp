// The CFI expression evaluator (engine/symbols/dwarf_expression.h) on the expressions that
// real unwind tables hold.
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gtest/gtest.h>

#include <map>

#include "engine/symbols/dwarf_expression.h"

namespace profsh::symbols {
namespace {

Dwarf_Op Op(uint8_t atom, Dwarf_Word number, Dwarf_Word number2, Dwarf_Word offset) {
  Dwarf_Op op;
  op.atom = atom;
  op.number = number;
  op.number2 = number2;
  op.offset = offset;
  return op;
}

ExpressionContext Context(std::map<unsigned, uint64_t> regs, std::map<uint64_t, uint64_t> memory) {
  ExpressionContext c;
  c.read_register = [regs](unsigned r) -> std::optional<uint64_t> {
    auto it = regs.find(r);
    if (it == regs.end()) return std::nullopt;
    return it->second;
  };
  c.read_memory = [memory](uint64_t a, size_t) -> std::optional<uint64_t> {
    auto it = memory.find(a);
    if (it == memory.end()) return std::nullopt;
    return it->second;
  };
  return c;
}

// A PLT entry's CFA (GCC/binutils): rsp + 8, plus 8 more once past the entry's push.
TEST(DwarfExpression, PltCfa) {
  const Dwarf_Op ops[] = {
      Op(DW_OP_breg7, 8, 0, 0), Op(DW_OP_breg16, 0, 0, 2), Op(DW_OP_lit15, 0, 0, 4),
      Op(DW_OP_and, 0, 0, 5),   Op(DW_OP_lit11, 0, 0, 6),  Op(DW_OP_ge, 0, 0, 7),
      Op(DW_OP_lit3, 0, 0, 8),  Op(DW_OP_shl, 0, 0, 9),    Op(DW_OP_plus, 0, 0, 10)};
  auto early = EvaluateExpression(ops, 9, Context({{7, 0x1000}, {16, 0x4020 + 6}}, {}));
  ASSERT_TRUE(early);
  EXPECT_EQ(early->value, 0x1008u);
  auto late = EvaluateExpression(ops, 9, Context({{7, 0x1000}, {16, 0x4020 + 11}}, {}));
  ASSERT_TRUE(late);
  EXPECT_EQ(late->value, 0x1010u);
  EXPECT_TRUE(late->is_location);
}

TEST(DwarfExpression, SavedRegisterRulesAndStackValue) {
  ExpressionContext c = Context({}, {{0x2000 - 16, 0xabc}});
  c.cfa = 0x2000;
  const Dwarf_Op offset_rule[] = {
      Op(DW_OP_call_frame_cfa, 0, 0, 0), Op(DW_OP_consts, static_cast<Dwarf_Word>(-16), 0, 1),
      Op(DW_OP_plus, 0, 0, 3), Op(DW_OP_deref, 0, 0, 4), Op(DW_OP_stack_value, 0, 0, 5)};
  auto v = EvaluateExpression(offset_rule, 5, c);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->value, 0xabcu);
  EXPECT_FALSE(v->is_location);
  c.cfa.reset();
  EXPECT_FALSE(EvaluateExpression(offset_rule, 5, c));  // no CFA known
}

TEST(DwarfExpression, BranchesAndFailures) {
  // lit1; bra +1 (over lit5) -> lit7 ; so the stack is 7, not 5
  const Dwarf_Op ops[] = {Op(DW_OP_lit1, 0, 0, 0), Op(DW_OP_bra, 1, 0, 1), Op(DW_OP_lit5, 0, 0, 4),
                          Op(DW_OP_lit7, 0, 0, 5)};
  auto v = EvaluateExpression(ops, 4, Context({}, {}));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->value, 7u);
  const Dwarf_Op loop[] = {Op(DW_OP_skip, static_cast<Dwarf_Word>(-3), 0, 0)};
  EXPECT_FALSE(EvaluateExpression(loop, 1, Context({}, {})));
  const Dwarf_Op underflow[] = {Op(DW_OP_plus, 0, 0, 0)};
  EXPECT_FALSE(EvaluateExpression(underflow, 1, Context({}, {})));
  const Dwarf_Op unknown_register[] = {Op(DW_OP_breg3, 0, 0, 0)};
  EXPECT_FALSE(EvaluateExpression(unknown_register, 1, Context({}, {})));
  const Dwarf_Op bad_memory[] = {Op(DW_OP_lit0, 0, 0, 0), Op(DW_OP_deref, 0, 0, 1)};
  EXPECT_FALSE(EvaluateExpression(bad_memory, 2, Context({}, {})));
  const Dwarf_Op divide_by_zero[] = {Op(DW_OP_lit1, 0, 0, 0), Op(DW_OP_lit0, 0, 0, 1),
                                     Op(DW_OP_div, 0, 0, 2)};
  EXPECT_FALSE(EvaluateExpression(divide_by_zero, 3, Context({}, {})));
  EXPECT_FALSE(EvaluateExpression(nullptr, 0, Context({}, {})));
}

}  // namespace
}  // namespace profsh::symbols
