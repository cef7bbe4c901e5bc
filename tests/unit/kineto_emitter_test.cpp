// A stream's events as Kineto-shaped trace events, straight into a window's builder: NVTX
// ranges, torch operators with torch's argument names, the fwdbwd flow from a forward operator
// to its backward one (Kineto's rule), and memory instants with the running total.
#include "engine/decoding/kineto_emitter.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <unordered_map>

#include "engine/trace/kineto_schema.h"
#include "engine/trace/trace_builder.h"

namespace profsh {
namespace {

namespace st = stream;

struct TraceSink final : WindowSink {
  Trace trace;
  TraceBuilder builder{trace};
  int sealed = 0;
  TraceBuilder& Open(const WindowInfo&, int64_t* origin_ns) override {
    *origin_ns = 1'000;  // ts 0 of the window's trace is tick 1000
    return builder;
  }
  void Sealed(const WindowInfo&) override { ++sealed; }
};

struct Emitter {
  TickClock clock;
  StreamNames names;
  TraceSink sink;
  KinetoEmitter emitter{sink, clock, names};
  std::set<int64_t> threads{7, 8};
  std::unordered_map<int64_t, std::string> thread_names{{8, "autograd"}};
  WindowInfo info;
  Emitter() {
    clock.Set(0, 0, 1.0);  // a tick is a ns
    emitter.SetPid(42);
    emitter.Open(0, info);
  }
  void Seal() {
    const ProcessNames process{"python3 train.py", "", true, threads, thread_names};
    emitter.Seal(0, info, {}, process);
    ASSERT_TRUE(sink.builder.Finish().ok());
  }
  st::StreamEvent Op(uint64_t ticks, uint64_t name, int64_t sequence, uint64_t forward_thread = 0,
                     uint8_t scope = 0) {
    st::StreamEvent e;
    e.kind = st::kOpBegin;
    e.ticks = ticks;
    e.name = name;
    e.op.sequence = sequence;
    e.op.forward_thread = forward_thread;
    e.op.scope = scope;
    return e;
  }
};

const Trace& T(Emitter& e) {
  return e.sink.trace;
}

size_t Named(const Trace& t, std::string_view name, char phase = 'X') {
  for (size_t i = 0; i < t.events.size(); ++i)
    if (t.str(t.events.name(i)) == name && t.events.phase(i) == phase) return i;
  return SIZE_MAX;
}

int64_t IntArg(const Trace& t, size_t event, std::string_view key, bool top_level = false) {
  const std::optional<uint32_t> id = t.strings.Find(key);
  ArgValue v;
  if (!id || !t.args.Get(t.events.args(event)).Find(*id, &v, top_level) || !v.is_number())
    return INT64_MIN;
  return v.AsInt();
}

TEST(KinetoEmitter, RangesAndOperatorsCarryTorchsNames) {
  Emitter e;
  e.names.DefineString(1, "layer");
  e.names.DefineString(2, "aten::mm");
  e.names.DefineString(3, "[[2, 3], [3, 4]]");
  st::StreamEvent push;
  push.kind = st::kPush;
  push.ticks = 1'500;
  push.name = 1;
  e.emitter.Level(0, OpenLevel{push, 0, false}, 7, 4'500, 0);
  st::StreamEvent mm = e.Op(2'000, 2, 5);
  mm.op.shapes = 3;
  e.emitter.Level(0, OpenLevel{mm, 0, false}, 7, 3'000, 0);
  e.Seal();
  const Trace& t = T(e);
  const size_t layer = Named(t, "layer"), op = Named(t, "aten::mm");
  ASSERT_NE(layer, SIZE_MAX);
  ASSERT_NE(op, SIZE_MAX);
  EXPECT_EQ(t.category_name(t.events.category(layer)), "nvtx");
  EXPECT_EQ(t.events.ts(layer), 500);  // relative to the window's origin
  EXPECT_EQ(t.events.dur(layer), 3'000);
  EXPECT_EQ(t.category_name(t.events.category(op)), kineto::kCpuOp);
  EXPECT_EQ(IntArg(t, op, kineto::kSequenceNumber), 5);
  const std::optional<uint32_t> dims = t.strings.Find(kineto::kInputDims);
  ASSERT_TRUE(dims);
  ArgValue v;
  ASSERT_TRUE(t.args.Get(t.events.args(op)).Find(*dims, &v));
  EXPECT_EQ(v.type, ArgType::kJson);
  EXPECT_EQ(t.str(v.str), "[[2,3],[3,4]]");  // kept as compact JSON
  EXPECT_EQ(e.sink.sealed, 1);
  // Threads and the process are named as Kineto names them.
  EXPECT_NE(Named(t, kineto::kProcessName, 'M'), SIZE_MAX);
  EXPECT_NE(Named(t, kineto::kThreadName, 'M'), SIZE_MAX);
}

// Kineto's rule: a backward op naming forward thread 7 links to the op with its sequence number
// on thread 7 that started last.
TEST(KinetoEmitter, BackwardOpsLinkToTheirForwardOpByFlow) {
  Emitter e;
  e.names.DefineString(1, "aten::linear");
  e.names.DefineString(2, "AddmmBackward0");
  e.emitter.Level(0, OpenLevel{e.Op(2'000, 1, 9), 0, false}, 7, 2'500, 0);
  e.emitter.Level(0, OpenLevel{e.Op(2'100, 1, 9), 0, false}, 7, 2'400, 0);  // the later one
  e.emitter.Level(0, OpenLevel{e.Op(5'000, 2, 9, 7, 1), 0, false}, 8, 5'300, 0);
  e.emitter.Level(0, OpenLevel{e.Op(6'000, 2, 77, 7, 1), 0, false}, 8, 6'300, 0);  // no forward
  e.Seal();
  const Trace& t = T(e);
  size_t starts = 0, finishes = 0;
  int64_t start_ts = 0, finish_ts = 0, start_id = 0, finish_id = 0;
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.category_name(t.events.category(i)) != kineto::kFwdBwd) continue;
    const int64_t id = IntArg(t, i, kineto::kFlowId, true);
    if (t.events.phase(i) == 's') {
      ++starts;
      start_ts = t.events.ts(i);
      start_id = id;
    } else if (t.events.phase(i) == 'f') {
      ++finishes;
      finish_ts = t.events.ts(i);
      finish_id = id;
    }
  }
  EXPECT_EQ(starts, 1u);
  EXPECT_EQ(finishes, 1u);
  EXPECT_EQ(start_ts, 1'100);
  EXPECT_EQ(finish_ts, 4'000);
  EXPECT_EQ(start_id, finish_id);
  EXPECT_NE(start_id, INT64_MIN);
  const size_t backward = Named(t, "AddmmBackward0");
  EXPECT_EQ(IntArg(t, backward, kineto::kFwdThreadId), 7);
}

TEST(KinetoEmitter, MemoryInstantsCarryTheRunningTotal) {
  Emitter e;
  st::StreamEvent alloc;
  alloc.kind = st::kMemory;
  alloc.ticks = 3'000;
  alloc.bytes = 4096;
  alloc.address = 0xabc0;
  e.emitter.Memory(0, alloc, 7, 10'000);
  e.Seal();
  const Trace& t = T(e);
  const size_t m = Named(t, kineto::kMemoryEvent, 'i');
  ASSERT_NE(m, SIZE_MAX);
  EXPECT_EQ(t.events.ts(m), 2'000);
  EXPECT_EQ(IntArg(t, m, kineto::kTotalAllocated), 10'000);
  EXPECT_EQ(IntArg(t, m, kineto::kBytes), 4096);
  EXPECT_EQ(IntArg(t, m, kineto::kAddr), 0xabc0);
}

// A window already sealed takes nothing (a corrupt stream must not make that a crash).
TEST(KinetoEmitter, ASealedWindowTakesNothingMore) {
  Emitter e;
  e.Seal();
  const size_t events = T(e).events.size();
  e.emitter.Level(0, OpenLevel{e.Op(9'000, 1, 1), 0, false}, 7, 9'500, 0);
  int64_t origin = 0;
  EXPECT_EQ(e.emitter.Builder(0, &origin), nullptr);
  EXPECT_EQ(T(e).events.size(), events);
}

}  // namespace
}  // namespace profsh
