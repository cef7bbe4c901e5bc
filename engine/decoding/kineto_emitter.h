// Emission of a stream's events as Kineto-shaped trace events (the names and arguments torch's
// own traces have, engine/trace/kineto_schema.h), one TraceBuilder per window: ranges, torch
// operators, marks, counters, frames, memory instants and the memory counter, start/end ranges
// on lanes, fwdbwd flows, process and thread names. What belongs to which window, and when a
// window is complete, the decoder decides.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/decoding/emitter_state.h"
#include "engine/decoding/range_matcher.h"
#include "engine/decoding/stream_clock.h"
#include "engine/decoding/stream_names.h"
#include "engine/decoding/window_tracker.h"
#include "engine/trace/trace_builder.h"

namespace profsh {

// The argument schemas of a flow's two ends as Kineto writes them: the start's "id", the
// finish's "id" and "bp": "e". Shared by the fwdbwd and ac2g flows.
struct FlowSchemas {
  uint32_t start = 0, finish = 0;
};
FlowSchemas BuildFlowSchemas(TraceBuilder& b);

class WindowSink {
 public:
  virtual ~WindowSink() = default;
  // Where a new window's events go, and the absolute time of that trace's ts = 0.
  virtual TraceBuilder& Open(const WindowInfo& window, int64_t* origin_ns) = 0;
  // The window is complete: nothing more will be added to its builder.
  virtual void Sealed(const WindowInfo& window) = 0;
  // A Python function's call on thread `tid` (stream::kPythonCallsDomain), absolute ns: kept
  // for the Python frames of CPU samples. Ignored unless a sink wants them.
  virtual void PythonCall(int64_t /*pid*/, int64_t /*tid*/, int64_t /*begin_ns*/,
                          int64_t /*end_ns*/, std::string_view /*name*/) {}
};

// Who the process is, for its names: views of what the decoder keeps.
struct ProcessNames {
  std::string_view name;  // its command line (or executable)
  std::string_view rank;  // RANK of its launcher, if any
  bool named = true;      // the last image of its pid: its name is the process's
  const std::set<int64_t>& threads;
  const std::unordered_map<int64_t, std::string>& thread_names;
};

class KinetoEmitter : public EmitterState {
 public:
  KinetoEmitter(WindowSink& sink, const TickClock& clock, const StreamNames& names)
      : EmitterState(clock, names), sink_(sink) {}

  void Open(size_t window, const WindowInfo& info);
  // The builder of an open window and its origin (for the GPU emitter); nullptr once sealed.
  TraceBuilder* Builder(size_t window, int64_t* origin) {
    Output* o = Out(window);
    if (o == nullptr) return nullptr;
    *origin = o->origin;
    return o->builder;
  }

  // A push/pop level, task or operator, ended at `end_ticks`.
  void Level(size_t window, const OpenLevel& level, int64_t tid, uint64_t end_ticks, uint8_t flags);
  void Mark(size_t window, const stream::StreamEvent& e, int64_t tid);
  void Counter(size_t window, const stream::StreamEvent& e, int64_t tid);
  void Frame(size_t window, uint64_t domain, uint64_t begin_ticks, uint64_t end_ticks);
  void Paused(size_t window, uint64_t begin_ticks, uint64_t end_ticks);
  // An allocation or free, with the process's running total after it.
  void Memory(size_t window, const stream::StreamEvent& e, int64_t tid, int64_t total);
  // The window's last events (start/end ranges on lanes, flows, names); then it is handed over.
  void Seal(size_t window, const WindowInfo& info, std::vector<MatchedRange> ranges,
            const ProcessNames& process);

 private:
  struct SchemaKey {
    uint64_t a, b, c, d;
    bool operator==(const SchemaKey&) const = default;
  };
  struct SchemaKeyHash {
    size_t operator()(const SchemaKey& k) const;
  };
  struct BackwardOp {
    int64_t tid, ts, forward_thread, sequence;
  };
  struct Output {
    TraceBuilder* builder = nullptr;
    int64_t origin = 0;
    // Argument schemas already built: ranges' and marks' by (domain, category, color, attribute
    // flags and payload type); operators' by (shapes, types, stack, which inline values).
    std::unordered_map<SchemaKey, uint32_t, SchemaKeyHash> schemas, op_schemas;
    uint32_t memory_schema = TraceBuilder::kNoArgs, counter_schema = TraceBuilder::kNoArgs;
    // For the fwdbwd flows: per (thread, sequence number) the start of the forward op that
    // launches the backward one, and the backward ops that name a forward thread.
    std::map<std::pair<int64_t, int64_t>, int64_t> forward_ops;
    std::vector<BackwardOp> backward_ops;
  };

  // The window's output; nullptr once it is sealed (the decoder sends nothing there, but a
  // corrupt stream must not make that a crash).
  Output* Out(size_t window) {
    auto it = outputs_.find(window);
    return it == outputs_.end() ? nullptr : &it->second;
  }
  int64_t Ts(const Output& o, uint64_t ticks) const { return clock_.ToNs(ticks) - o.origin; }
  uint32_t AttrSchema(Output& o, uint64_t domain, const stream::EventAttrs& attrs);
  void Add(Output& o, char phase, uint64_t begin, uint64_t end, std::string_view name,
           std::string_view category, Ident tid, uint32_t schema, const stream::EventAttrs* payload,
           uint8_t flags = 0);
  void Operator(Output& o, const OpenLevel& level, int64_t tid, uint64_t end_ticks, uint8_t flags);
  void NoteForwardBackward(Output& o, const stream::OpFields& op, int64_t tid, int64_t ts);
  void ForwardBackwardFlows(Output& o);
  void Lanes(Output& o, std::vector<MatchedRange> ranges);
  void Meta(Output& o, std::string_view what, Ident tid, std::string_view key,
            std::string_view value);
  void Names(Output& o, const ProcessNames& process);

  WindowSink& sink_;
  uint32_t flow_ids_ = 0;
  std::unordered_map<size_t, Output> outputs_;
};

}  // namespace profsh
