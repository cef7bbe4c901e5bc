#include "engine/decoding/kineto_emitter.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "engine/trace/kineto_schema.h"
#include "engine/util/hash.h"

namespace profsh {

namespace {

namespace st = stream;

constexpr uint8_t kUserScope = 7;      // at::RecordScope::USER_SCOPE (record_function)
constexpr uint8_t kBackwardScope = 1;  // at::RecordScope::BACKWARD_FUNCTION

std::string ColorText(uint32_t argb) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%06x", argb & 0xffffff);
  return buf;
}

// A payload's bits as the trace stores them: floats widened to doubles.
uint64_t PayloadBits(const st::EventAttrs& a) {
  if (a.payload_type != st::kPayloadFloat) return a.payload;
  float f;
  const uint32_t bits = static_cast<uint32_t>(a.payload);
  std::memcpy(&f, &bits, sizeof f);
  const double d = f;
  uint64_t out;
  std::memcpy(&out, &d, sizeof out);
  return out;
}

std::string LaneName(size_t lane) {
  return "NVTX start/end ranges " + std::to_string(lane + 1);
}

}  // namespace

size_t KinetoEmitter::SchemaKeyHash::operator()(const SchemaKey& k) const {
  static_assert(sizeof(SchemaKey) == 32, "hashed as bytes: no padding");
  return static_cast<size_t>(HashBytes(reinterpret_cast<const char*>(&k), sizeof(k)));
}

void KinetoEmitter::Open(size_t window, const WindowInfo& info) {
  Output& o = outputs_[window];
  o.builder = &sink_.Open(info, &o.origin);
}

uint32_t KinetoEmitter::AttrSchema(Output& o, uint64_t domain, const st::EventAttrs& a) {
  if (domain == 0 && a.flags == 0) return TraceBuilder::kNoArgs;
  const SchemaKey key{domain, a.category, a.color,
                      uint64_t{a.flags} | uint64_t{a.payload_type} << 8};
  auto [it, added] = o.schemas.try_emplace(key, 0);
  if (!added) return it->second;
  TraceBuilder& b = *o.builder;
  b.BeginArgs();
  if (domain != 0) b.AddStringArg("domain", names_.DomainName(domain));
  if (a.flags & st::kAttrCategory) {
    auto c = names_.categories.find({domain, a.category});
    if (c != names_.categories.end()) {
      b.AddStringArg("category", c->second);
    } else {
      b.AddIntArg("category", static_cast<int64_t>(a.category));
    }
  }
  if (a.flags & st::kAttrColor) b.AddStringArg("color", ColorText(a.color));
  if (a.flags & st::kAttrPayload) {
    const ArgType type = a.payload_type == st::kPayloadDouble || a.payload_type == st::kPayloadFloat
                             ? ArgType::kDouble
                         : a.payload_type == st::kPayloadU64 ? ArgType::kUInt
                                                             : ArgType::kInt;
    b.AddInlineArg("payload", type);
  }
  it->second = b.BuildSchema();
  return it->second;
}

void KinetoEmitter::Add(Output& o, char phase, uint64_t begin, uint64_t end, std::string_view name,
                        std::string_view category, Ident tid, uint32_t schema,
                        const st::EventAttrs* payload, uint8_t flags) {
  EventFields e;
  e.phase = phase;
  e.ts = Ts(o, begin);
  e.dur = phase == 'X' ? clock_.ToNs(end) - clock_.ToNs(begin) : 0;
  e.name = name;
  e.category = category;
  e.pid = Ident{pid_, 0, false};
  e.tid = tid;
  e.flags = flags;
  words_.clear();
  if (schema != TraceBuilder::kNoArgs && payload && (payload->flags & st::kAttrPayload))
    PushInlineInt(words_, static_cast<int64_t>(PayloadBits(*payload)));
  o.builder->AddEvent(e, schema, words_);
}

void KinetoEmitter::Level(size_t window, const OpenLevel& level, int64_t tid, uint64_t end_ticks,
                          uint8_t flags) {
  Output* out = Out(window);
  if (out == nullptr) return;
  Output& o = *out;
  const st::StreamEvent& e = level.begin;
  if (e.kind == st::kOpBegin) {
    Operator(o, level, tid, end_ticks, flags);
    return;
  }
  Add(o, 'X', e.ticks, end_ticks, names_.Text(e.name), e.kind == st::kTaskBegin ? "itt" : "nvtx",
      Ident{tid, 0, false}, AttrSchema(o, e.domain, e.attrs), &e.attrs, flags);
}

// A PyTorch operator, with the arguments torch's Kineto export gives it, so that the analyses
// (shapes, stacks, FLOPs, backward-to-forward links) read it as they read torch's traces.
void KinetoEmitter::Operator(Output& o, const OpenLevel& level, int64_t tid, uint64_t end_ticks,
                             uint8_t flags) {
  const st::StreamEvent& e = level.begin;
  const st::OpFields& op = e.op;
  TraceBuilder& b = *o.builder;
  // The values that differ per op are inline words; the rest is the schema, built once per
  // window for each (shapes, types, stack, which inline values) an op has.
  words_.clear();
  if (op.sequence >= 0) PushInlineInt(words_, op.sequence);
  if (op.forward_thread != 0) PushInlineInt(words_, static_cast<int64_t>(op.forward_thread));
  if (op.flops != 0) PushInlineInt(words_, static_cast<int64_t>(op.flops));
  const uint64_t present =
      (op.sequence >= 0 ? 1 : 0) | (op.forward_thread != 0 ? 2 : 0) | (op.flops != 0 ? 4 : 0);
  auto [cached, added] =
      o.op_schemas.try_emplace(SchemaKey{op.shapes, op.dtypes, op.stack, present}, 0);
  if (added) {
    b.BeginArgs();
    if (op.shapes != 0) b.AddJsonArg(kineto::kInputDims, names_.Text(op.shapes));
    if (op.dtypes != 0) b.AddJsonArg(kineto::kInputType, names_.Text(op.dtypes));
    if (present & 1) b.AddInlineArg(kineto::kSequenceNumber, ArgType::kInt);
    if (present & 2) b.AddInlineArg(kineto::kFwdThreadId, ArgType::kInt);
    if (op.stack != 0) b.AddStringArg(kineto::kCallStack, names_.Text(op.stack));
    if (present & 4) b.AddInlineArg(kineto::kFlops, ArgType::kInt);
    cached->second = b.BuildSchema();
  }
  EventFields f;
  f.phase = 'X';
  f.ts = Ts(o, e.ticks);
  f.dur = clock_.ToNs(end_ticks) - clock_.ToNs(e.ticks);
  f.name = names_.Text(e.name);
  f.category = op.scope == kUserScope ? kineto::kUserAnnotation : kineto::kCpuOp;
  f.pid = Ident{pid_, 0, false};
  f.tid = Ident{tid, 0, false};
  f.flags = flags;
  b.AddEvent(f, cached->second, words_);
  if (op.sequence >= 0) NoteForwardBackward(o, op, tid, f.ts);
}

// Kineto's rule: the backward node (the op that names a forward thread) links to the op with
// the same sequence number on that thread that started last; among the ops sharing a number
// it is the innermost, the one that created the autograd node.
void KinetoEmitter::NoteForwardBackward(Output& o, const st::OpFields& op, int64_t tid,
                                        int64_t ts) {
  if (op.forward_thread != 0) {
    if (op.scope == kBackwardScope)
      o.backward_ops.push_back({tid, ts, static_cast<int64_t>(op.forward_thread), op.sequence});
    return;
  }
  auto [it, added] = o.forward_ops.try_emplace({tid, op.sequence}, ts);
  if (!added && ts >= it->second) it->second = ts;
}

FlowSchemas BuildFlowSchemas(TraceBuilder& b) {
  FlowSchemas s;
  b.BeginArgs();
  b.AddInlineArg(kineto::kFlowId, ArgType::kInt, TraceBuilder::Place::kTopLevel);
  s.start = b.BuildSchema();
  b.BeginArgs();
  b.AddInlineArg(kineto::kFlowId, ArgType::kInt, TraceBuilder::Place::kTopLevel);
  b.AddStringArg(kineto::kBindingPoint, "e", TraceBuilder::Place::kTopLevel);
  s.finish = b.BuildSchema();
  return s;
}

void KinetoEmitter::ForwardBackwardFlows(Output& o) {
  if (o.backward_ops.empty()) return;
  TraceBuilder& b = *o.builder;
  const auto [start_schema, finish_schema] = BuildFlowSchemas(b);
  for (const BackwardOp& back : o.backward_ops) {
    auto fwd = o.forward_ops.find({back.forward_thread, back.sequence});
    if (fwd == o.forward_ops.end()) continue;
    // Unique across the processes of a session (one trace may hold several), and exact as a
    // JSON number.
    const int64_t flow = (static_cast<int64_t>(pid_ & 0xfffff) << 32) | ++flow_ids_;
    words_.clear();
    PushInlineInt(words_, flow);
    EventFields e;
    e.phase = 's';
    e.ts = fwd->second;
    e.name = kineto::kFwdBwd;
    e.category = kineto::kFwdBwd;
    e.pid = Ident{pid_, 0, false};
    e.tid = Ident{back.forward_thread, 0, false};
    b.AddEvent(e, start_schema, words_);
    e.phase = 'f';
    e.ts = back.ts;
    e.tid = Ident{back.tid, 0, false};
    b.AddEvent(e, finish_schema, words_);
  }
}

void KinetoEmitter::Mark(size_t window, const st::StreamEvent& e, int64_t tid) {
  Output* out = Out(window);
  if (out == nullptr) return;
  Output& o = *out;
  Add(o, 'i', e.ticks, e.ticks, names_.Text(e.name), "nvtx", Ident{tid, 0, false},
      AttrSchema(o, e.domain, e.attrs), &e.attrs);
}

void KinetoEmitter::Counter(size_t window, const st::StreamEvent& e, int64_t tid) {
  Output* out = Out(window);
  if (out == nullptr) return;
  Output& o = *out;
  auto it = names_.counters.find(e.name);
  const std::string name =
      it == names_.counters.end() ? "counter " + std::to_string(e.name) : it->second.name;
  const uint8_t type = it == names_.counters.end() ? 0 : it->second.type;
  TraceBuilder& b = *o.builder;
  b.BeginArgs();
  if (type == st::kCounterFloat || type == st::kCounterDouble) {
    double v;
    std::memcpy(&v, &e.value, sizeof v);
    b.AddDoubleArg("value", v);
  } else if (type == st::kCounterU64) {
    ArgValue v;
    v.type = e.value > static_cast<uint64_t>(INT64_MAX) ? ArgType::kUInt : ArgType::kInt;
    v.int_value = static_cast<int64_t>(e.value);
    b.AddArg("value", false, v, "", false);
  } else {
    b.AddIntArg("value", st::UnZigZag(e.value));
  }
  Add(o, 'C', e.ticks, e.ticks, name, "itt_counter", Ident{tid, 0, false}, b.BuildSchema(),
      nullptr);
}

void KinetoEmitter::Frame(size_t window, uint64_t domain, uint64_t begin_ticks,
                          uint64_t end_ticks) {
  Output* out = Out(window);
  if (out == nullptr) return;
  Output& o = *out;
  Add(o, 'X', begin_ticks, end_ticks, names_.DomainName(domain) + " frame", "itt_frame",
      Ident{0, o.builder->InternString("ITT frames"), true}, TraceBuilder::kNoArgs, nullptr);
}

void KinetoEmitter::Paused(size_t window, uint64_t begin_ticks, uint64_t end_ticks) {
  Output* out = Out(window);
  if (out == nullptr) return;
  Output& o = *out;
  Add(o, 'X', begin_ticks, end_ticks, "collection paused", "profsh",
      Ident{0, o.builder->InternString("profsh"), true}, TraceBuilder::kNoArgs, nullptr);
}

// torch's "[memory]" instant (which the operator view attributes to the innermost range of the
// thread), and a point of the process's memory counter track.
void KinetoEmitter::Memory(size_t window, const st::StreamEvent& e, int64_t tid, int64_t total) {
  Output* out = Out(window);
  if (out == nullptr) return;
  Output& o = *out;
  TraceBuilder& b = *o.builder;
  if (o.memory_schema == TraceBuilder::kNoArgs) {
    b.BeginArgs();
    b.AddInlineArg(kineto::kTotalAllocated, ArgType::kInt);
    b.AddInlineArg(kineto::kBytes, ArgType::kInt);
    b.AddInlineArg(kineto::kAddr, ArgType::kInt);
    b.AddIntArg(kineto::kDeviceType, 0);
    b.AddIntArg(kineto::kDeviceId, -1);
    o.memory_schema = b.BuildSchema();
    b.BeginArgs();
    b.AddInlineArg(kineto::kTotalAllocated, ArgType::kInt);
    o.counter_schema = b.BuildSchema();
  }
  words_.clear();
  PushInlineInt(words_, total);
  PushInlineInt(words_, e.bytes);
  PushInlineInt(words_, static_cast<int64_t>(e.address));
  EventFields f;
  f.phase = 'i';
  f.ts = Ts(o, e.ticks);
  f.name = kineto::kMemoryEvent;
  f.category = kineto::kCpuInstantEvent;
  f.pid = Ident{pid_, 0, false};
  f.tid = Ident{tid, 0, false};
  b.AddEvent(f, o.memory_schema, words_);
  words_.clear();
  PushInlineInt(words_, total);
  f.phase = 'C';
  f.name = kineto::kCpuMemoryCounter;
  f.category = kineto::kMemoryCategory;
  b.AddEvent(f, o.counter_schema, words_);
}

// Start/end ranges on lanes where they do not overlap (like Perfetto's async tracks).
void KinetoEmitter::Lanes(Output& o, std::vector<MatchedRange> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const MatchedRange& a, const MatchedRange& b) {
    return a.begin_ticks != b.begin_ticks ? a.begin_ticks < b.begin_ticks
                                          : a.end_ticks > b.end_ticks;
  });
  std::vector<uint64_t> lane_end;
  std::vector<Ident> lanes;
  for (const MatchedRange& r : ranges) {
    size_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > r.begin_ticks) ++lane;
    if (lane == lane_end.size()) {
      lane_end.push_back(0);
      lanes.push_back(Ident{0, o.builder->InternString(LaneName(lane)), true});
    }
    lane_end[lane] = r.end_ticks;
    Add(o, 'X', r.begin_ticks, r.end_ticks, names_.Text(r.start.name), "nvtx", lanes[lane],
        AttrSchema(o, r.start.domain, r.start.attrs), &r.start.attrs,
        r.cut ? kFlagUnterminated : 0);
  }
  for (size_t lane = 0; lane < lanes.size(); ++lane)
    Meta(o, "thread_name", lanes[lane], "name", LaneName(lane));
}

void KinetoEmitter::Meta(Output& o, std::string_view what, Ident tid, std::string_view key,
                         std::string_view value) {
  TraceBuilder& b = *o.builder;
  b.BeginArgs();
  b.AddStringArg(key, value);
  const uint32_t schema = b.BuildSchema();
  EventFields e;
  e.phase = 'M';
  e.name = what;
  e.pid = Ident{pid_, 0, false};
  e.tid = tid;
  b.AddEvent(e, schema, {});
}

// Names: the process (its command line, rank), its threads.
void KinetoEmitter::Names(Output& o, const ProcessNames& process) {
  const Ident main_thread{pid_, 0, false};
  if (process.named) {
    Meta(o, "process_name", main_thread, "name", process.name);
    if (!process.rank.empty())
      Meta(o, "process_labels", main_thread, "labels", "rank " + std::string(process.rank));
  }
  for (const int64_t tid : process.threads) {
    auto it = process.thread_names.find(tid);
    const std::string name = it != process.thread_names.end() ? it->second
                             : tid == pid_                    ? std::string("main thread")
                                                              : "thread " + std::to_string(tid);
    Meta(o, "thread_name", Ident{tid, 0, false}, "name", name);
  }
}

void KinetoEmitter::Seal(size_t window, const WindowInfo& info, std::vector<MatchedRange> ranges,
                         const ProcessNames& process) {
  auto it = outputs_.find(window);
  if (it == outputs_.end()) return;
  Output& o = it->second;
  Lanes(o, std::move(ranges));
  ForwardBackwardFlows(o);
  Names(o, process);
  // The sink may free the builder now; what the window kept for building goes too, so that a
  // long job's decoder stays small.
  outputs_.erase(it);
  sink_.Sealed(info);
}

}  // namespace profsh
