#include "engine/symbols/unwinder.h"

#include <elfutils/libdw.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/symbols/dwarf_expression.h"
#include "engine/symbols/module_files.h"

namespace profsh::symbols {
namespace {

// x86-64 DWARF register numbers (System V psABI): rax rdx rcx rbx rsi rdi rbp rsp r8..r15,
// then the return address column.
constexpr unsigned kDwarfRegisters = 17;
constexpr unsigned kDwarfSp = 7;
constexpr unsigned kDwarfBp = 6;
constexpr unsigned kDwarfReturnAddress = 16;
constexpr X86Reg kPerfOfDwarf[kDwarfRegisters] = {
    X86Reg::kAx,  X86Reg::kDx,  X86Reg::kCx,  X86Reg::kBx,  X86Reg::kSi,  X86Reg::kDi,
    X86Reg::kBp,  X86Reg::kSp,  X86Reg::kR8,  X86Reg::kR9,  X86Reg::kR10, X86Reg::kR11,
    X86Reg::kR12, X86Reg::kR13, X86Reg::kR14, X86Reg::kR15, X86Reg::kIp};

struct Registers {
  uint64_t value[kDwarfRegisters] = {};
  uint32_t known = 0;  // bit i: value[i] holds the register

  std::optional<uint64_t> get(unsigned r) const {
    if (r >= kDwarfRegisters || !((known >> r) & 1)) return std::nullopt;
    return value[r];
  }
  void set(unsigned r, uint64_t v) {
    value[r] = v;
    known |= 1u << r;
  }
};

// The unwind rules at one pc, copied out of libdw's frame state: samples hit the same pcs
// again and again, and libdw re-executes the CIE's and FDE's instructions (and allocates) for
// every dwarf_cfi_addrframe.
struct CompiledRule {
  enum Kind : uint8_t { kUndefined, kSameValue, kExpression };
  uint8_t reg;
  Kind kind;
  uint16_t first, count;  // in CompiledFrame::ops
};
struct CompiledFrame {
  bool found = false;  // no CFI covers the pc: the frame-pointer chain is all there is
  bool signal = false;
  uint16_t cfa_count = 0;  // ops[0, cfa_count) compute the CFA
  std::vector<Dwarf_Op> ops;
  std::vector<CompiledRule> rules;
};

CompiledFrame Compile(Dwarf_Frame* frame) {
  CompiledFrame compiled;
  Dwarf_Op* ops = nullptr;
  size_t nops = 0;
  if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops == 0 || nops > 1000) return compiled;
  compiled.found = true;
  dwarf_frame_info(frame, nullptr, nullptr, &compiled.signal);
  compiled.ops.assign(ops, ops + nops);
  compiled.cfa_count = static_cast<uint16_t>(nops);
  for (unsigned r = 0; r < kDwarfRegisters; ++r) {
    Dwarf_Op ops_mem[3];
    if (dwarf_frame_register(frame, static_cast<int>(r), ops_mem, &ops, &nops) != 0) continue;
    CompiledRule rule{static_cast<uint8_t>(r), CompiledRule::kExpression,
                      static_cast<uint16_t>(compiled.ops.size()), static_cast<uint16_t>(nops)};
    if (nops == 0) {
      rule.kind = ops == nullptr ? CompiledRule::kSameValue : CompiledRule::kUndefined;
    } else if (nops > 1000 || compiled.ops.size() + nops > 60000) {
      continue;
    } else {
      compiled.ops.insert(compiled.ops.end(), ops, ops + nops);
    }
    compiled.rules.push_back(rule);
  }
  return compiled;
}

// Unwind tables of one file: .eh_frame (what the loader keeps) and .debug_frame (what
// -fno-asynchronous-unwind-tables builds and some assembly carry instead).
struct FileCfi {
  Dwarf_CFI* eh_frame = nullptr;
  Dwarf* dwarf = nullptr;
  Dwarf_CFI* debug_frame = nullptr;
  std::unordered_map<uint64_t, CompiledFrame> frames;  // by the file's address
};

// Compiled frames kept across all files before the caches start over (about 300 bytes each).
constexpr size_t kMaxCompiledFrames = 1 << 16;

enum class StepResult { kNext, kEnd, kTruncated };

}  // namespace

struct Unwinder::Impl {
  ModuleFiles files;
  std::unordered_map<const ElfFile*, FileCfi> cfi;
  size_t compiled_frames = 0;

  ~Impl() {
    for (auto& [file, c] : cfi) {
      if (c.eh_frame != nullptr) dwarf_cfi_end(c.eh_frame);
      if (c.dwarf != nullptr) dwarf_end(c.dwarf);  // owns debug_frame
    }
  }

  FileCfi& CfiOf(const ElfFile* file) {
    auto it = cfi.find(file);
    if (it != cfi.end()) return it->second;
    FileCfi c;
    c.eh_frame = dwarf_getcfi_elf(file->elf());
    c.dwarf = dwarf_begin_elf(file->elf(), DWARF_C_READ, nullptr);
    if (c.dwarf != nullptr) c.debug_frame = dwarf_getcfi(c.dwarf);
    return cfi.emplace(file, c).first->second;
  }

  // The rules covering `address` (the file's own address space).
  const CompiledFrame& FrameAt(const ElfFile* file, uint64_t address) {
    FileCfi& c = CfiOf(file);
    if (auto it = c.frames.find(address); it != c.frames.end()) return it->second;
    if (compiled_frames >= kMaxCompiledFrames) {
      for (auto& [f, other] : cfi) other.frames.clear();
      compiled_frames = 0;
    }
    Dwarf_Frame* frame = nullptr;
    if (c.eh_frame == nullptr || dwarf_cfi_addrframe(c.eh_frame, address, &frame) != 0) {
      frame = nullptr;
      if (c.debug_frame != nullptr && dwarf_cfi_addrframe(c.debug_frame, address, &frame) != 0) {
        frame = nullptr;
      }
    }
    CompiledFrame compiled;
    if (frame != nullptr) {
      compiled = Compile(frame);
      std::free(frame);
    }
    ++compiled_frames;
    return c.frames.emplace(address, std::move(compiled)).first->second;
  }
};

Unwinder::Unwinder() : impl_(std::make_unique<Impl>()) {}
Unwinder::~Unwinder() = default;

namespace {

class StackMemory {
 public:
  StackMemory(uint64_t base, std::span<const uint8_t> bytes) : base_(base), bytes_(bytes) {}
  std::optional<uint64_t> Read(uint64_t address, size_t size) const {
    if (size == 0 || size > 8 || address < base_) return std::nullopt;
    const uint64_t at = address - base_;
    if (at > bytes_.size() || bytes_.size() - at < size) return std::nullopt;
    uint64_t value = 0;
    std::memcpy(&value, bytes_.data() + at, size);
    return value;
  }

 private:
  uint64_t base_;
  std::span<const uint8_t> bytes_;
};

// One step by the frame-pointer chain: the caller's frame pointer at [bp], the return address
// at [bp + 8], the caller's stack pointer just above them.
StepResult StepByFramePointer(Registers* regs, const StackMemory& memory) {
  const auto bp = regs->get(kDwarfBp);
  const auto sp = regs->get(kDwarfSp);
  if (!bp || !sp || *bp < *sp || (*bp & 7) != 0) return StepResult::kTruncated;
  const auto saved_bp = memory.Read(*bp, 8);
  const auto return_address = memory.Read(*bp + 8, 8);
  if (!saved_bp || !return_address) return StepResult::kTruncated;
  Registers caller;
  // Callee-saved registers other than rbp are unknown without CFI; keep them, as perf's
  // frame-pointer walk ignores them anyway.
  caller = *regs;
  caller.set(kDwarfBp, *saved_bp);
  caller.set(kDwarfSp, *bp + 16);
  caller.set(kDwarfReturnAddress, *return_address);
  *regs = caller;
  return *return_address == 0 ? StepResult::kEnd : StepResult::kNext;
}

StepResult StepByCfi(const CompiledFrame& frame, Registers* regs, const StackMemory& memory) {
  ExpressionContext context;
  context.read_register = [regs](unsigned r) { return regs->get(r); };
  context.read_memory = [&memory](uint64_t address, size_t size) {
    return memory.Read(address, size);
  };
  const auto cfa = EvaluateExpression(frame.ops.data(), frame.cfa_count, context);
  if (!cfa) return StepResult::kTruncated;
  context.cfa = cfa->value;
  Registers caller;
  for (const CompiledRule& rule : frame.rules) {
    switch (rule.kind) {
      case CompiledRule::kSameValue:  // this frame left the register alone
        if (const auto v = regs->get(rule.reg)) caller.set(rule.reg, *v);
        break;
      case CompiledRule::kUndefined:
        // An undefined return address marks the outermost frame.
        if (rule.reg == kDwarfReturnAddress) return StepResult::kEnd;
        break;
      case CompiledRule::kExpression: {
        const auto value = EvaluateExpression(frame.ops.data() + rule.first, rule.count, context);
        if (!value) break;
        if (!value->is_location) {
          caller.set(rule.reg, value->value);
        } else if (const auto saved = memory.Read(value->value, 8)) {
          caller.set(rule.reg, *saved);
        }
        break;
      }
    }
  }
  caller.set(kDwarfSp, context.cfa.value());
  const auto return_address = caller.get(kDwarfReturnAddress);
  if (!return_address) return StepResult::kTruncated;
  *regs = caller;
  return *return_address == 0 ? StepResult::kEnd : StepResult::kNext;
}

}  // namespace

std::vector<UnwoundFrame> Unwinder::Unwind(const AddressSpace& space, const StackSnapshot& snapshot,
                                           size_t max_depth) {
  std::vector<UnwoundFrame> frames;
  ++stats_.samples;
  if (!snapshot.has(X86Reg::kIp) || max_depth == 0) {
    ++stats_.truncated;
    return frames;
  }
  Registers regs;
  for (unsigned r = 0; r < kDwarfRegisters; ++r) {
    if (snapshot.has(kPerfOfDwarf[r])) regs.set(r, snapshot.reg(kPerfOfDwarf[r]));
  }
  const StackMemory memory(snapshot.reg(X86Reg::kSp),
                           snapshot.has(X86Reg::kSp) ? snapshot.stack : std::span<const uint8_t>());
  uint64_t pc = snapshot.reg(X86Reg::kIp);
  bool is_return_address = false;
  frames.push_back({pc, false});
  bool truncated = true;
  const Mapping* last_mapping = nullptr;
  const ElfFile* last_file = nullptr;
  while (frames.size() < max_depth) {
    const Mapping* mapping = space.Find(pc);
    if (mapping == nullptr) break;
    // A return address points after the call; the call itself (pc - 1) is in the caller's
    // range even when the call was the function's last instruction.
    const uint64_t lookup = is_return_address ? pc - 1 : pc;
    const CompiledFrame* frame = nullptr;
    // Neighbouring frames are mostly in one file: ask ModuleFiles (a path lookup) on a change.
    if (mapping != last_mapping) {
      last_mapping = mapping;
      last_file = impl_->files.Get(*mapping);
    }
    if (const ElfFile* file = last_file) {
      const uint64_t offset = lookup - mapping->start + mapping->file_offset;
      if (const auto address = file->OffsetToAddress(offset)) {
        frame = &impl_->FrameAt(file, *address);
      }
    }
    const uint64_t old_sp = regs.get(kDwarfSp).value_or(0);
    const bool signal_frame = frame != nullptr && frame->found && frame->signal;
    const StepResult step = frame != nullptr && frame->found ? StepByCfi(*frame, &regs, memory)
                                                             : StepByFramePointer(&regs, memory);
    if (step == StepResult::kEnd) {
      truncated = false;
      break;
    }
    if (step == StepResult::kTruncated) break;
    const auto new_sp = regs.get(kDwarfSp);
    if (!new_sp || *new_sp <= old_sp) break;  // not moving up the stack: a loop or garbage
    pc = regs.get(kDwarfReturnAddress).value();
    // The frame a signal handler returns through resumes the interrupted code at an exact pc.
    is_return_address = !signal_frame;
    frames.push_back({pc, is_return_address});
  }
  if (truncated) ++stats_.truncated;
  stats_.frames += frames.size();
  return frames;
}

}  // namespace profsh::symbols
