// The blocks of a CPU samples file (stream_format.h, kSample*): a typed struct per block with
// its Encode and Decode, in the style of stream_codec.h (no allocation when encoding, a
// bounds-checked Cursor when decoding).
#pragma once

#include <cstdint>
#include <string_view>

#include "engine/stream/stream_codec.h"

namespace profsh::stream {

enum SampleMethod : uint8_t {
  kSamplePerfCpuClock = 1,  // perf_event_open, PERF_COUNT_SW_CPU_CLOCK
  kSamplePerfCycles = 2,    // perf_event_open, PERF_COUNT_HW_CPU_CYCLES
  kSampleTimer = 3,         // the collector's CLOCK_THREAD_CPUTIME_ID timers
  kSampleNone = 4,          // no method worked; the note says why
};

// u8 method, u32 rate (Hz), u32 stack bytes copied per sample, str note
struct SampleConfigBlock {
  static constexpr BlockType kType = kSampleConfig;
  uint8_t method = 0;
  uint32_t rate_hz = 0, stack_bytes = 0;
  std::string_view note;  // why a fallback ran, or empty

  static void Fields(auto& self, auto& wire) {
    wire.Fixed(self.method);
    wire.Fixed(self.rate_hz);
    wire.Fixed(self.stack_bytes);
    wire.Str(self.note);
  }
  bool Valid() const { return method >= kSamplePerfCpuClock && method <= kSampleNone; }
  PROFSH_BLOCK_CODEC
};

enum SampleTaskKind : uint8_t {
  kTaskFork = 1,  // pid/tid began (a new process when pid != ppid's pid... see parent fields)
  kTaskExit = 2,
  kTaskComm = 3,  // named
  kTaskExec = 4,  // the process image was replaced: its mappings are gone
};

// u8 kind, i64 pid, i64 tid, i64 parent pid, i64 parent tid, u64 time_ns, str name
struct SampleTaskBlock {
  static constexpr BlockType kType = kSampleTask;
  uint8_t kind = 0;
  int64_t pid = 0, tid = 0, parent_pid = 0, parent_tid = 0;
  uint64_t time_ns = 0;
  std::string_view name;

  static void Fields(auto& self, auto& wire) {
    wire.Fixed(self.kind);
    wire.Fixed(self.pid);
    wire.Fixed(self.tid);
    wire.Fixed(self.parent_pid);
    wire.Fixed(self.parent_tid);
    wire.Fixed(self.time_ns);
    wire.Str(self.name);
  }
  bool Valid() const { return kind >= kTaskFork && kind <= kTaskExec; }
  PROFSH_BLOCK_CODEC
};

// i64 pid, u64 time_ns, u64 start, u64 length, u64 file offset, u8 executable, str path,
// str build id (lower-case hex, may be empty)
struct SampleMappingBlock {
  static constexpr BlockType kType = kSampleMapping;
  int64_t pid = 0;
  uint64_t time_ns = 0, start = 0, length = 0, file_offset = 0;
  uint8_t executable = 0;
  std::string_view path, build_id;

  static void Fields(auto& self, auto& wire) {
    wire.Fixed(self.pid);
    wire.Fixed(self.time_ns);
    wire.Fixed(self.start);
    wire.Fixed(self.length);
    wire.Fixed(self.file_offset);
    wire.Fixed(self.executable);
    wire.Str(self.path);
    wire.Str(self.build_id);
  }
  bool Valid() const { return start + length >= start; }
  PROFSH_BLOCK_CODEC
};

// i64 pid, i64 tid, u64 time_ns, u64 regs mask, one u64 per set bit (perf_event_x86_regs
// order), str stack bytes (from the stack pointer up), varint weight (periods of CPU time the
// sample stands for: 1, or more when the timer fallback's expirations were merged by the tick)
struct SampleBlock {
  static constexpr BlockType kType = kSample;
  static constexpr int kMaxRegs = 24;
  int64_t pid = 0, tid = 0;
  uint64_t time_ns = 0;
  uint64_t regs_mask = 0;
  const uint64_t* regs = nullptr;        // Encode: popcount(regs_mask) values in bit order
  uint64_t decoded_regs[kMaxRegs] = {};  // Decode: by register number
  std::string_view stack;
  uint64_t weight = 1;

  template <typename Sink>
  void Encode(Sink& out) const {
    PutFixed(out, pid);
    PutFixed(out, tid);
    PutFixed(out, time_ns);
    PutFixed(out, regs_mask);
    const int n = __builtin_popcountll(regs_mask);
    PutBytes(out, regs, static_cast<size_t>(n) * sizeof(uint64_t));
    PutStr(out, stack);
    PutVarintTo(out, weight);
  }
  bool Decode(Cursor& c) {
    pid = c.Fixed<int64_t>();
    tid = c.Fixed<int64_t>();
    time_ns = c.Fixed<uint64_t>();
    regs_mask = c.Fixed<uint64_t>();
    if (regs_mask >> kMaxRegs) return false;
    for (int r = 0; r < kMaxRegs && c.ok; ++r) {
      if ((regs_mask >> r) & 1) decoded_regs[r] = c.Fixed<uint64_t>();
    }
    stack = c.Str();
    weight = c.Varint();
    return c.ok && weight >= 1 && weight <= (uint64_t{1} << 20);
  }
};

// varint lost (the kernel's buffer was full), varint throttled (the kernel lowered the rate),
// varint dropped by the collector (timer fallback: ring full or unsafe moment); cumulative
struct SampleDropsBlock {
  static constexpr BlockType kType = kSampleDrops;
  uint64_t lost = 0, throttled = 0, dropped = 0;

  static void Fields(auto& self, auto& wire) {
    wire.Varint(self.lost);
    wire.Varint(self.throttled);
    wire.Varint(self.dropped);
  }
  PROFSH_BLOCK_CODEC
};

}  // namespace profsh::stream
