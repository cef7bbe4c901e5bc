// What a CPU sample carries for unwinding: the user registers and a copy of the user stack
// from the stack pointer up. The same shape whether the kernel wrote it (perf_event_open with
// PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER) or the collector's timer signal handler did
// (from its ucontext), so one unwinder serves both.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace profsh::symbols {

// x86-64 registers in the order of the kernel's enum perf_event_x86_regs
// (linux/perf_regs.h: AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8..R15).
enum class X86Reg : uint8_t {
  kAx = 0,
  kBx,
  kCx,
  kDx,
  kSi,
  kDi,
  kBp,
  kSp,
  kIp,
  kFlags,
  kCs,
  kSs,
  kDs,
  kEs,
  kFs,
  kGs,
  kR8,
  kR9,
  kR10,
  kR11,
  kR12,
  kR13,
  kR14,
  kR15,
  kCount
};

struct StackSnapshot {
  std::array<uint64_t, static_cast<size_t>(X86Reg::kCount)> regs{};
  uint64_t regs_mask = 0;  // bit i set: regs[i] is valid
  // Bytes of the user stack starting at regs[kSp]; may be shorter than the real stack.
  std::span<const uint8_t> stack;

  uint64_t reg(X86Reg r) const { return regs[static_cast<size_t>(r)]; }
  bool has(X86Reg r) const { return (regs_mask >> static_cast<unsigned>(r)) & 1; }
};

}  // namespace profsh::symbols
