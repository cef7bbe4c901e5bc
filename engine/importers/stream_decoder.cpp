#include "engine/importers/stream_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>

#include "engine/collector/schedule.h"
#include "engine/collector/stream_format.h"
#include "engine/importers/stream_blocks.h"
#include "engine/util/hash.h"

namespace profsh {

namespace st = stream;

namespace {

constexpr size_t kSealedWindowsKept = 16;

std::string ColorText(uint32_t argb) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%06x", argb & 0xffffff);
  return buf;
}

// One decoded event, before it is known which window it belongs to.
struct RawEvent {
  uint64_t ticks;
  int64_t tid;
  uint64_t range_id, domain, name, category, color, bits;
  uint8_t kind, flags, payload_type;
  // Operators (kOpBegin): category = shapes, color = dtypes, bits = flops, and:
  uint64_t stack, forward_thread;
  int64_t sequence;
};

struct SchemaKey {
  uint64_t a, b, c, d;
  bool operator==(const SchemaKey&) const = default;
};
struct SchemaKeyHash {
  size_t operator()(const SchemaKey& k) const {
    return static_cast<size_t>(HashBytes(reinterpret_cast<const char*>(&k), sizeof(k)));
  }
};
static_assert(sizeof(SchemaKey) == 32, "hashed as bytes: no padding");

}  // namespace

struct StreamDecoder::Impl {
  struct Window {
    WindowInfo info;
    uint64_t begin_ticks = 0;
    uint64_t end_ticks = UINT64_MAX;  // open
    ProfilerAction last_action = ProfilerAction::kRecord;
    TraceBuilder* builder = nullptr;
    int64_t origin = 0;
    bool sealed = false;
    // Argument schemas already built in this window: ranges' and marks' by (domain, category,
    // color, attribute flags and payload type); operators' by (shapes, types, stack, which
    // inline values).
    std::unordered_map<SchemaKey, uint32_t, SchemaKeyHash> schemas, op_schemas;
    // For the fwdbwd flows: per (thread, sequence number) the forward op that launches the
    // backward one, and the backward ops that name a forward thread.
    std::map<std::pair<int64_t, int64_t>, int64_t> forward_ops;  // -> start (ns from origin)
    struct BackwardOp {
      int64_t tid, ts, forward_thread, sequence;
    };
    std::vector<BackwardOp> backward_ops;
  };
  // An open level (push or task) on a thread and domain.
  struct Open {
    uint64_t ticks;
    uint32_t name;
    int window;  // -1: outside every window (its pop is just matched)
    bool emitted;
    uint8_t kind, flags, payload_type;
    uint64_t domain, category, color, bits;
    uint64_t stack = 0, forward_thread = 0;
    int64_t sequence = -1;
  };
  struct OpenRange {
    uint64_t ticks;
    int64_t tid;
    RawEvent e;
    int window;
  };
  struct DoneRange {
    int64_t begin, end;
    int window;
    RawEvent e;
    uint8_t flags;
  };

  Impl(StreamDecoder& owner, WindowSink& sink, SessionSummary& summary,
       std::vector<std::string>& warnings)
      : owner(owner), sink(sink), summary(summary), warnings(warnings) {}

  StreamDecoder& owner;
  WindowSink& sink;
  SessionSummary& summary;
  std::vector<std::string>& warnings;

  StreamProcess process;
  bool has_process = false;
  bool last_image = true;
  bool header_read = false;
  // Clock: ticks -> absolute ns.
  bool clock_fixed = false;  // given by SetClock
  bool have_clock = false;
  uint64_t ticks0 = 0;
  int64_t real0 = 0, mono0 = 0;
  double slope = 1;
  std::vector<uint64_t> round_ends;  // ticks of each kClock block, in order
  // Configuration (kConfig): whether windows come from steps or capture ranges.
  bool windowed = false;
  bool preloaded = false;
  // Windows by index (Window::info.index); the oldest sealed ones are let go (window_base).
  std::deque<Window> windows;
  size_t window_base = 0;
  Window& Win(size_t index) { return windows[index - window_base]; }
  size_t WindowEnd() const { return window_base + windows.size(); }
  ProfilerAction last_action = ProfilerAction::kNone;
  int64_t last_step = -1;
  uint64_t last_demand = 0;

  std::vector<std::string> strings;
  std::vector<bool> has_string;
  std::unordered_map<uint64_t, std::pair<std::string, uint8_t>> domains;
  std::map<std::pair<uint64_t, uint64_t>, std::string> categories;
  struct CounterDef {
    std::string name;
    uint8_t type;
  };
  std::unordered_map<uint64_t, CounterDef> counters;
  std::unordered_map<int64_t, std::string> thread_names;
  std::vector<int64_t> slot_tid;
  std::map<int64_t, bool> threads;
  std::unordered_map<uint64_t, std::vector<Open>> open;  // (tid << 16 | domain) -> levels
  std::unordered_map<uint64_t, OpenRange> open_ranges;
  std::unordered_map<uint64_t, std::pair<uint64_t, int64_t>> range_ends;  // id -> (ticks, tid)
  std::map<std::pair<uint64_t, uint64_t>, std::vector<uint64_t>> open_frames;
  std::vector<DoneRange> done_ranges;
  std::vector<RawEvent> pending;
  uint64_t last_ticks = 0;
  uint64_t paused_at = UINT64_MAX;
  std::map<uint64_t, std::array<uint64_t, 3>> drops_by_slot;
  uint64_t slot_drops[3] = {};
  uint64_t process_drops[3] = {};
  uint64_t process_metadata_refused = 0;
  int64_t memory_total = 0, memory_peak = 0;
  // Allocations and frees arrive thread by thread; the running total (and so the peak) needs
  // them in time order, which is known for the ones older than the release watermark.
  std::vector<RawEvent> memory_events;
  uint32_t flow_ids = 0;
  TraceBuilder* memory_schema_builder = nullptr;
  uint32_t memory_schema = 0, counter_schema = 0;
  std::vector<uint32_t> words;

  int64_t ToNs(uint64_t ticks) const {
    double d = static_cast<double>(static_cast<int64_t>(ticks - ticks0)) * slope;
    return real0 + static_cast<int64_t>(std::llround(d));
  }
  std::string Where(size_t offset) const {
    return owner.path() + ": block at byte " + std::to_string(offset);
  }
  std::string_view Text(uint64_t id) const {
    if (id < strings.size() && has_string[id]) return strings[id];
    return "<profsh: unknown string>";
  }
  std::string DomainName(uint64_t d) const {
    auto it = domains.find(d);
    return it == domains.end() ? "domain " + std::to_string(d) : it->second.first;
  }

  // --- windows ---
  Window& NewWindow(uint64_t begin, const char* reason, bool steps, int64_t step) {
    Window w;
    w.info.pid = process.pid;
    w.info.index = WindowEnd();
    w.info.reason = reason;
    w.info.has_steps = steps;
    w.info.first_step = w.info.last_step = step;
    w.begin_ticks = begin;
    w.info.begin_ns = begin == 0 ? process.start_ns : ToNs(begin);
    windows.push_back(std::move(w));
    Window& nw = windows.back();
    nw.builder = &sink.Open(nw.info, &nw.origin);
    return nw;
  }
  Window* OpenWindow() {
    if (windows.empty() || windows.back().end_ticks != UINT64_MAX) return nullptr;
    return &windows.back();
  }
  void EndWindow(uint64_t ticks) {
    if (Window* w = OpenWindow()) {
      w->end_ticks = std::max(ticks, w->begin_ticks);
      w->info.end_ns = ToNs(w->end_ticks);
    }
  }
  void OnStep(uint64_t ticks, int64_t step, ProfilerAction action) {
    const bool records =
        action == ProfilerAction::kRecord || action == ProfilerAction::kRecordAndSave;
    Window* w = OpenWindow();
    // A window ends after its RECORD_AND_SAVE step, or when recording stops without one.
    if (w && (w->last_action == ProfilerAction::kRecordAndSave || !records)) {
      EndWindow(ticks);
      w = nullptr;
    }
    if (records) {
      if (w == nullptr) {
        w = &NewWindow(ticks, last_demand ? "on demand" : "schedule", true, step);
        w->info.request = last_demand;
      }
      w->info.last_step = step;
      w->last_action = action;
    }
    last_action = action;
    last_step = step;
  }
  void OnCapture(uint64_t ticks, bool begin) {
    if (begin) {
      if (!OpenWindow()) NewWindow(ticks, "capture range", false, 0);
    } else {
      EndWindow(ticks);
    }
  }
  // The window recording at `ticks`, or -1. A window already handed over takes nothing more:
  // such late events are counted instead.
  int WindowAt(uint64_t ticks) {
    for (size_t i = WindowEnd(); i-- > window_base;) {
      const Window& w = Win(i);
      if (ticks >= w.begin_ticks && ticks < w.end_ticks) {
        if (!w.sealed) return static_cast<int>(i);
        ++summary.late_events;
        return -1;
      }
      if (w.end_ticks <= ticks) break;  // windows are in time order
    }
    return -1;
  }

  // --- output ---
  uint32_t Schema(Window& w, uint64_t domain, uint8_t flags, uint64_t category, uint64_t color,
                  uint8_t payload_type) {
    if (domain == 0 && flags == 0) return TraceBuilder::kNoArgs;
    const SchemaKey key{domain, category, color, uint64_t{flags} | uint64_t{payload_type} << 8};
    auto it = w.schemas.find(key);
    if (it != w.schemas.end()) return it->second;
    TraceBuilder& b = *w.builder;
    b.BeginArgs();
    ArgValue v;
    if (domain != 0) {
      v.type = ArgType::kString;
      b.AddArg("domain", false, v, DomainName(domain), false);
    }
    if (flags & st::kAttrCategory) {
      auto c = categories.find({domain, category});
      if (c != categories.end()) {
        v.type = ArgType::kString;
        b.AddArg("category", false, v, c->second, false);
      } else {
        ArgValue n;
        n.type = ArgType::kInt;
        n.int_value = static_cast<int64_t>(category);
        b.AddArg("category", false, n, "", false);
      }
    }
    if (flags & st::kAttrColor) {
      v.type = ArgType::kString;
      b.AddArg("color", false, v, ColorText(static_cast<uint32_t>(color)), false);
    }
    if (flags & st::kAttrPayload) {
      ArgValue p;
      if (payload_type == st::kPayloadDouble || payload_type == st::kPayloadFloat) {
        p.type = ArgType::kDouble;
      } else if (payload_type == st::kPayloadU64) {
        p.type = ArgType::kUInt;
        p.int_value = -1;
      } else {
        p.type = ArgType::kInt;
        p.int_value = INT64_MIN;  // two inline words
      }
      b.AddArg("payload", false, p, "", true);
    }
    uint32_t schema = b.BuildSchema();
    w.schemas.emplace(key, schema);
    return schema;
  }

  void Emit(Window& w, char phase, uint64_t begin, uint64_t end, std::string_view name,
            const char* category, Ident tid, uint32_t schema, bool has_payload, uint64_t bits,
            uint8_t flags = 0) {
    EventFields e;
    e.phase = phase;
    e.ts = ToNs(begin) - w.origin;
    e.dur = phase == 'X' ? ToNs(end) - ToNs(begin) : 0;
    e.name = name;
    e.category = category;
    e.pid = Ident{process.pid, 0, false};
    e.tid = tid;
    e.flags = flags;
    words.clear();
    if (schema != TraceBuilder::kNoArgs && has_payload) {
      words.push_back(static_cast<uint32_t>(bits));
      words.push_back(static_cast<uint32_t>(bits >> 32));
    }
    w.builder->AddEvent(e, schema, words);
  }

  // A PyTorch operator, with the arguments torch's Kineto export gives it, so that the analyses
  // (shapes, stacks, FLOPs, backward-to-forward links) read it as they read torch's traces.
  void EmitOp(const Open& o, int64_t tid, uint64_t end_ticks, uint8_t flags) {
    Window& w = Win(o.window);
    TraceBuilder& b = *w.builder;
    // The values that differ per op are inline words; the rest is the schema, built once per
    // window for each (shapes, types, stack, which inline values) an op has.
    words.clear();
    auto push = [&](int64_t value) {
      words.push_back(static_cast<uint32_t>(value));
      words.push_back(static_cast<uint32_t>(static_cast<uint64_t>(value) >> 32));
    };
    if (o.sequence >= 0) push(o.sequence);
    if (o.forward_thread != 0) push(static_cast<int64_t>(o.forward_thread));
    if (o.bits != 0) push(static_cast<int64_t>(o.bits));
    const uint64_t present =
        (o.sequence >= 0 ? 1 : 0) | (o.forward_thread != 0 ? 2 : 0) | (o.bits != 0 ? 4 : 0);
    auto [cached, added] =
        w.op_schemas.try_emplace(SchemaKey{o.category, o.color, o.stack, present}, 0);
    if (added) {
      b.BeginArgs();
      ArgValue v;
      ArgValue n;
      n.type = ArgType::kInt;
      n.int_value = INT64_MIN;  // two inline words
      if (o.category != 0) {
        v.type = ArgType::kJson;
        b.AddArg("Input Dims", false, v, Text(o.category), false);
      }
      if (o.color != 0) {
        v.type = ArgType::kJson;
        b.AddArg("Input type", false, v, Text(o.color), false);
      }
      if (present & 1) b.AddArg("Sequence number", false, n, "", true);
      if (present & 2) b.AddArg("Fwd thread id", false, n, "", true);
      if (o.stack != 0) {
        v.type = ArgType::kString;
        b.AddArg("Call stack", false, v, Text(o.stack), false);
      }
      if (present & 4) b.AddArg("flops", false, n, "", true);
      cached->second = b.BuildSchema();
    }
    const uint32_t schema = cached->second;
    EventFields e;
    e.phase = 'X';
    e.ts = ToNs(o.ticks) - w.origin;
    e.dur = ToNs(end_ticks) - ToNs(o.ticks);
    e.name = Text(o.name);
    e.category = o.flags == kUserScope ? "user_annotation" : "cpu_op";
    e.pid = Ident{process.pid, 0, false};
    e.tid = Ident{tid, 0, false};
    e.flags = flags;
    b.AddEvent(e, schema, words);
    ++summary.ranges;
    ++summary.operators;
    if (o.sequence >= 0) NoteForwardBackward(w, o, tid, e.ts);
  }

  // Kineto's rule: the backward node (the op that names a forward thread) links to the op with
  // the same sequence number on that thread that started last; among the ops sharing a number
  // it is the innermost, the one that created the autograd node.
  void NoteForwardBackward(Window& w, const Open& o, int64_t tid, int64_t ts) {
    if (o.forward_thread != 0) {
      if (o.flags == kBackwardScope)
        w.backward_ops.push_back({tid, ts, static_cast<int64_t>(o.forward_thread), o.sequence});
      return;
    }
    auto [it, added] = w.forward_ops.try_emplace({tid, o.sequence}, ts);
    if (!added && ts >= it->second) it->second = ts;
  }

  void EmitForwardBackwardFlows(Window& w) {
    if (w.backward_ops.empty()) return;
    TraceBuilder& b = *w.builder;
    ArgValue id;
    id.type = ArgType::kInt;
    id.int_value = INT64_MIN;  // inline, two words
    b.BeginArgs();
    b.AddArg("id", true, id, "", true);
    const uint32_t start_schema = b.BuildSchema();
    b.BeginArgs();
    b.AddArg("id", true, id, "", true);
    ArgValue bp;
    bp.type = ArgType::kString;
    b.AddArg("bp", true, bp, "e", false);
    const uint32_t finish_schema = b.BuildSchema();
    for (const Window::BackwardOp& back : w.backward_ops) {
      auto fwd = w.forward_ops.find({back.forward_thread, back.sequence});
      if (fwd == w.forward_ops.end()) continue;
      // Unique across the processes of a session (one trace may hold several), and exact
      // as a JSON number.
      const int64_t flow = (static_cast<int64_t>(process.pid & 0xfffff) << 32) | ++flow_ids;
      words.clear();
      words.push_back(static_cast<uint32_t>(flow));
      words.push_back(static_cast<uint32_t>(static_cast<uint64_t>(flow) >> 32));
      EventFields e;
      e.phase = 's';
      e.ts = fwd->second;
      e.name = "fwdbwd";
      e.category = "fwdbwd";
      e.pid = Ident{process.pid, 0, false};
      e.tid = Ident{back.forward_thread, 0, false};
      b.AddEvent(e, start_schema, words);
      e.phase = 'f';
      e.ts = back.ts;
      e.tid = Ident{back.tid, 0, false};
      b.AddEvent(e, finish_schema, words);
    }
  }
  static constexpr uint8_t kUserScope = 7;      // at::RecordScope::USER_SCOPE (record_function)
  static constexpr uint8_t kBackwardScope = 1;  // at::RecordScope::BACKWARD_FUNCTION

  // An allocation or free: torch's "[memory]" instant (which the operator view attributes to
  // the innermost range of the thread), and a point of the process's memory counter track.
  void EmitMemory(Window& w, const RawEvent& e, int64_t bytes) {
    TraceBuilder& b = *w.builder;
    if (memory_schema_builder != w.builder) {
      memory_schema_builder = w.builder;
      b.BeginArgs();
      ArgValue n;
      n.type = ArgType::kInt;
      n.int_value = INT64_MIN;  // inline, two words
      b.AddArg("Total Allocated", false, n, "", true);
      b.AddArg("Bytes", false, n, "", true);
      b.AddArg("Addr", false, n, "", true);
      ArgValue c;
      c.type = ArgType::kInt;
      c.int_value = 0;
      b.AddArg("Device Type", false, c, "", false);
      c.int_value = -1;
      b.AddArg("Device Id", false, c, "", false);
      memory_schema = b.BuildSchema();
      b.BeginArgs();
      b.AddArg("Total Allocated", false, n, "", true);
      counter_schema = b.BuildSchema();
    }
    auto push = [&](int64_t v) {
      words.push_back(static_cast<uint32_t>(v));
      words.push_back(static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32));
    };
    words.clear();
    push(memory_total);
    push(bytes);
    push(static_cast<int64_t>(e.range_id));
    EventFields f;
    f.phase = 'i';
    f.ts = ToNs(e.ticks) - w.origin;
    f.name = "[memory]";
    f.category = "cpu_instant_event";
    f.pid = Ident{process.pid, 0, false};
    f.tid = Ident{e.tid, 0, false};
    b.AddEvent(f, memory_schema, words);
    words.clear();
    push(memory_total);
    f.phase = 'C';
    f.name = "CPU Memory";
    f.category = "memory";
    b.AddEvent(f, counter_schema, words);
    ++summary.memory_events;
  }

  void EmitRange(const Open& o, int64_t tid, uint64_t end_ticks, uint8_t flags) {
    if (o.kind == st::kOpBegin) {
      EmitOp(o, tid, end_ticks, flags);
      return;
    }
    Window& w = Win(o.window);
    uint32_t schema = Schema(w, o.domain, o.flags, o.category, o.color, o.payload_type);
    Emit(w, 'X', o.ticks, end_ticks, Text(o.name), o.kind == st::kTaskBegin ? "itt" : "nvtx",
         Ident{tid, 0, false}, schema, o.flags & st::kAttrPayload, o.bits, flags);
    ++summary.ranges;
  }

  // Closes the levels of `tid` still open: at its exit (thread_exit) or at the stream's end.
  void CloseThread(int64_t tid, uint64_t ticks, bool thread_exit) {
    for (auto& [key, stack] : open) {
      if (static_cast<int64_t>(key >> 16) != tid) continue;
      for (const Open& o : stack) {
        if (o.window < 0 || o.emitted) continue;
        const Window& w = Win(o.window);
        EmitRange(o, tid, std::min(ticks, w.end_ticks), kFlagUnterminated);
        if (thread_exit) {
          ++summary.open_at_thread_exit;
        } else {
          ++summary.open_at_end;
        }
      }
      stack.clear();
    }
  }

  // A window is complete: cut what is still open at its end, then hand it over.
  void Seal(size_t index) {
    Window& w = Win(index);
    if (w.sealed) return;
    for (auto& [key, stack] : open) {
      const int64_t tid = static_cast<int64_t>(key >> 16);
      for (Open& o : stack) {
        if (o.window != static_cast<int>(index) || o.emitted) continue;
        // Cut at the window's end: its pop will come later and be matched silently.
        EmitRange(o, tid, w.end_ticks == UINT64_MAX ? last_ticks : w.end_ticks,
                  windowed ? 0 : kFlagUnterminated);
        if (!windowed) ++summary.open_at_end;
        o.emitted = true;
      }
    }
    for (auto& [id, r] : open_ranges) {
      if (r.window != static_cast<int>(index)) continue;
      auto end = range_ends.find(id);
      if (end != range_ends.end()) {
        done_ranges.push_back({static_cast<int64_t>(r.ticks),
                               static_cast<int64_t>(end->second.first), static_cast<int>(index),
                               r.e, 0});
        range_ends.erase(end);
      } else {
        uint64_t cut = w.end_ticks == UINT64_MAX ? last_ticks : w.end_ticks;
        done_ranges.push_back({static_cast<int64_t>(r.ticks),
                               static_cast<int64_t>(std::max(cut, r.ticks)),
                               static_cast<int>(index), r.e, kFlagUnterminated});
        if (!windowed) ++summary.open_at_end;
      }
      r.window = -2;  // done
    }
    for (auto it = open_ranges.begin(); it != open_ranges.end();) {
      it = it->second.window == -2 ? open_ranges.erase(it) : std::next(it);
    }
    if (paused_at != UINT64_MAX && WindowAt(paused_at) == static_cast<int>(index)) {
      Emit(w, 'X', paused_at, w.end_ticks == UINT64_MAX ? last_ticks : w.end_ticks,
           "collection paused", "profsh", Ident{0, w.builder->InternString("profsh"), true},
           TraceBuilder::kNoArgs, false, 0);
    }
    EmitLanes(w, static_cast<int>(index));
    EmitForwardBackwardFlows(w);
    EmitNames(w);
    if (w.end_ticks == UINT64_MAX) w.info.end_ns = ToNs(last_ticks);
    w.sealed = true;
    sink.Sealed(w.info);
    // The sink may free the builder now; what the window kept for building goes too, so that a
    // long job's decoder stays small.
    if (memory_schema_builder == w.builder) memory_schema_builder = nullptr;
    w.builder = nullptr;
    decltype(w.schemas)().swap(w.schemas);
    decltype(w.op_schemas)().swap(w.op_schemas);
    decltype(w.forward_ops)().swap(w.forward_ops);
    decltype(w.backward_ops)().swap(w.backward_ops);
  }

  // Start/end ranges on lanes where they do not overlap (like Perfetto's async tracks).
  void EmitLanes(Window& w, int index) {
    std::vector<DoneRange> mine;
    for (auto it = done_ranges.begin(); it != done_ranges.end();) {
      if (it->window == index) {
        mine.push_back(*it);
        it = done_ranges.erase(it);
      } else {
        ++it;
      }
    }
    std::sort(mine.begin(), mine.end(), [](const DoneRange& a, const DoneRange& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    std::vector<int64_t> lane_end;
    for (const DoneRange& r : mine) {
      size_t lane = 0;
      while (lane < lane_end.size() && lane_end[lane] > r.begin) ++lane;
      if (lane == lane_end.size()) lane_end.push_back(0);
      lane_end[lane] = r.end;
      uint32_t schema = Schema(w, r.e.domain, r.e.flags, r.e.category, r.e.color, r.e.payload_type);
      Emit(w, 'X', static_cast<uint64_t>(r.begin), static_cast<uint64_t>(r.end), Text(r.e.name),
           "nvtx", LaneTrack(w, lane), schema, r.e.flags & st::kAttrPayload, r.e.bits, r.flags);
      ++summary.ranges;
    }
    for (size_t lane = 0; lane < lane_end.size(); ++lane) {
      Ident t = LaneTrack(w, lane);
      Meta(w, "thread_name", t, "name", LaneName(lane));
    }
  }
  static std::string LaneName(size_t lane) {
    return "NVTX start/end ranges " + std::to_string(lane + 1);
  }
  Ident LaneTrack(Window& w, size_t lane) {
    return Ident{0, w.builder->InternString(LaneName(lane)), true};
  }

  void Meta(Window& w, const char* what, Ident tid, std::string_view key, std::string_view value) {
    TraceBuilder& b = *w.builder;
    b.BeginArgs();
    ArgValue v;
    v.type = ArgType::kString;
    b.AddArg(key, false, v, value, false);
    uint32_t schema = b.BuildSchema();
    EventFields e;
    e.phase = 'M';
    e.name = what;
    e.pid = Ident{process.pid, 0, false};
    e.tid = tid;
    b.AddEvent(e, schema, {});
  }

  // Names: the process (its command line, rank), its threads.
  void EmitNames(Window& w) {
    const Ident main_thread{process.pid, 0, false};
    if (last_image) {
      Meta(w, "process_name", main_thread, "name",
           process.cmdline.empty() ? process.exe : process.cmdline);
      for (const auto& [k, v] : process.env) {
        if (k == "RANK") Meta(w, "process_labels", main_thread, "labels", "rank " + v);
      }
    }
    for (const auto& [tid, seen] : threads) {
      auto it = thread_names.find(tid);
      std::string name = it != thread_names.end() ? it->second
                         : tid == process.pid     ? std::string("main thread")
                                                  : "thread " + std::to_string(tid);
      Meta(w, "thread_name", Ident{tid, 0, false}, "name", name);
    }
  }

  // --- events ---
  void Process(const RawEvent& e) {
    last_ticks = std::max(last_ticks, e.ticks);
    const Ident track{e.tid, 0, false};
    switch (e.kind) {
      case st::kPush:
      case st::kTaskBegin:
      case st::kOpBegin: {
        Open o{e.ticks,
               static_cast<uint32_t>(e.name),
               WindowAt(e.ticks),
               false,
               e.kind,
               e.flags,
               e.payload_type,
               e.domain,
               e.category,
               e.color,
               e.bits};
        o.stack = e.stack;
        o.forward_thread = e.forward_thread;
        o.sequence = e.sequence;
        open[static_cast<uint64_t>(e.tid) << 16 | e.domain].push_back(o);
        break;
      }
      case st::kMemory:
        memory_events.push_back(e);  // emitted in time order by AccumulateMemory
        break;
      case st::kPop:
      case st::kTaskEnd: {
        auto it = open.find(static_cast<uint64_t>(e.tid) << 16 | e.domain);
        if (it == open.end() || it->second.empty()) {
          if (!windowed || WindowAt(e.ticks) >= 0) ++summary.unmatched_pops;
          break;
        }
        const Open o = it->second.back();
        it->second.pop_back();
        // torch's autograd engine wraps each backward node in an "evaluate_function" range that
        // carries no sequence number itself; torch's profiler gives it the node's.
        if (o.kind == st::kOpBegin && o.flags == kBackwardScope && o.sequence >= 0 &&
            !it->second.empty()) {
          Open& parent = it->second.back();
          if (parent.kind == st::kOpBegin && parent.sequence < 0 &&
              Text(parent.name).starts_with("autograd::engine::evaluate_function: ")) {
            parent.sequence = o.sequence;
            parent.forward_thread = o.forward_thread;
          }
        }
        if (o.window >= 0 && !o.emitted) EmitRange(o, e.tid, e.ticks, 0);
        break;
      }
      case st::kMark: {
        int w = WindowAt(e.ticks);
        if (w < 0) break;
        Window& win = Win(w);
        uint32_t schema = Schema(win, e.domain, e.flags, e.category, e.color, e.payload_type);
        Emit(win, 'i', e.ticks, e.ticks, Text(e.name), "nvtx", track, schema,
             e.flags & st::kAttrPayload, e.bits);
        ++summary.marks;
        break;
      }
      case st::kRangeStart:
        open_ranges[e.range_id] = OpenRange{e.ticks, e.tid, e, WindowAt(e.ticks)};
        if (open_ranges[e.range_id].window < 0) open_ranges.erase(e.range_id);
        break;
      case st::kRangeEnd: {
        auto it = open_ranges.find(e.range_id);
        if (it != open_ranges.end()) {
          const OpenRange& r = it->second;
          done_ranges.push_back({static_cast<int64_t>(r.ticks),
                                 static_cast<int64_t>(std::max(e.ticks, r.ticks)), r.window, r.e,
                                 0});
          open_ranges.erase(it);
        } else {
          // Its start may still come (from another thread's later block), or was outside windows.
          range_ends[e.range_id] = {e.ticks, e.tid};
        }
        break;
      }
      case st::kFrameBegin:
        open_frames[{e.domain, e.range_id}].push_back(e.ticks);
        break;
      case st::kFrameEnd: {
        auto& stack = open_frames[{e.domain, e.range_id}];
        if (stack.empty()) {
          if (!windowed || WindowAt(e.ticks) >= 0) ++summary.unmatched_pops;
          break;
        }
        uint64_t begin = stack.back();
        stack.pop_back();
        int w = WindowAt(begin);
        if (w < 0) break;
        Window& win = Win(w);
        Emit(win, 'X', begin, e.ticks, DomainName(e.domain) + " frame", "itt_frame",
             Ident{0, win.builder->InternString("ITT frames"), true}, TraceBuilder::kNoArgs, false,
             0);
        ++summary.ranges;
        break;
      }
      case st::kCounterSet: {
        int w = WindowAt(e.ticks);
        if (w < 0) break;
        Window& win = Win(w);
        auto it = counters.find(e.name);
        std::string name =
            it == counters.end() ? "counter " + std::to_string(e.name) : it->second.name;
        bool floating = it != counters.end() && (it->second.type == st::kCounterFloat ||
                                                 it->second.type == st::kCounterDouble);
        TraceBuilder& b = *win.builder;
        b.BeginArgs();
        ArgValue v;
        if (floating) {
          v.type = ArgType::kDouble;
          std::memcpy(&v.double_value, &e.bits, 8);
        } else if (it != counters.end() && it->second.type == st::kCounterU64) {
          v.type = e.bits > static_cast<uint64_t>(INT64_MAX) ? ArgType::kUInt : ArgType::kInt;
          v.int_value = static_cast<int64_t>(e.bits);
        } else {
          v.type = ArgType::kInt;
          v.int_value = st::UnZigZag(e.bits);
        }
        b.AddArg("value", false, v, "", false);
        Emit(win, 'C', e.ticks, e.ticks, name, "itt_counter", track, b.BuildSchema(), false, 0);
        ++summary.counter_values;
        break;
      }
      case st::kPause:
        paused_at = e.ticks;
        break;
      case st::kResume:
        if (paused_at != UINT64_MAX) {
          int w = WindowAt(paused_at);
          if (w >= 0) {
            Window& win = Win(w);
            Emit(win, 'X', paused_at, e.ticks, "collection paused", "profsh",
                 Ident{0, win.builder->InternString("profsh"), true}, TraceBuilder::kNoArgs, false,
                 0);
          }
          paused_at = UINT64_MAX;
        }
        break;
      case st::kThreadEnd:
        CloseThread(e.tid, e.ticks, true);
        break;
      default:
        break;
    }
  }

  // Threads' allocations arrive in per-thread batches: the process's running total (each
  // instant's "Total Allocated", the counter track, the peak) needs them in time order, so they
  // wait here until no earlier one can come.
  void AccumulateMemory(uint64_t watermark) {
    auto older = [watermark](const RawEvent& e) { return e.ticks <= watermark; };
    auto split = std::stable_partition(memory_events.begin(), memory_events.end(), older);
    std::stable_sort(memory_events.begin(), split,
                     [](const RawEvent& a, const RawEvent& b) { return a.ticks < b.ticks; });
    for (auto it = memory_events.begin(); it != split; ++it) {
      const int64_t bytes = static_cast<int64_t>(it->bits);
      memory_total += bytes;
      memory_peak = std::max(memory_peak, memory_total);
      if (int w = WindowAt(it->ticks); w >= 0) EmitMemory(Win(w), *it, bytes);
    }
    memory_events.erase(memory_events.begin(), split);
  }

  // Events old enough that no earlier step boundary can still arrive: two drain rounds back.
  void Release(bool everything) {
    uint64_t watermark = everything               ? UINT64_MAX
                         : round_ends.size() >= 3 ? round_ends[round_ends.size() - 3]
                                                  : 0;
    if (!pending.empty()) {
      size_t keep = 0;
      for (RawEvent& e : pending) {
        if (e.ticks <= watermark) {
          Process(e);
        } else {
          pending[keep++] = e;
        }
      }
      pending.resize(keep);
    }
    AccumulateMemory(watermark);
    if (watermark != 0)
      last_ticks =
          std::max(last_ticks, std::min(watermark, round_ends.empty() ? 0 : round_ends.back()));
    // Windows that ended before the watermark are complete.
    for (size_t i = window_base; i < WindowEnd(); ++i) {
      if (!Win(i).sealed && Win(i).end_ticks != UINT64_MAX && Win(i).end_ticks <= watermark)
        Seal(i);
    }
    // A long job makes windows without end: keep only the latest sealed ones (late events
    // falling into them are still counted).
    while (windows.size() > kSealedWindowsKept && windows.front().sealed) {
      windows.pop_front();
      ++window_base;
    }
  }

  Status DecodeEvents(const Block& b);
  Status HandleBlock(const Block& b);
  Status Boundary(const Block& b);
};

namespace {

bool ReadProcessBlock(Cursor& c, StreamProcess* p) {
  p->pid = c.Fixed<int64_t>();
  p->ppid = c.Fixed<int64_t>();
  p->start_ns = c.Fixed<int64_t>();
  p->exec_index = c.Fixed<uint32_t>();
  p->clock_kind = c.Fixed<uint32_t>();
  p->cmdline = ValidUtf8(c.Str());
  std::replace(p->cmdline.begin(), p->cmdline.end(), '\0', ' ');
  p->exe = ValidUtf8(c.Str());
  p->host = ValidUtf8(c.Str());
  uint64_t n = c.Varint();
  for (uint64_t i = 0; i < n && c.ok; ++i) {
    std::string key = ValidUtf8(c.Str());
    std::string value = ValidUtf8(c.Str());
    p->env.emplace_back(std::move(key), std::move(value));
  }
  return c.ok;
}

}  // namespace

Status StreamDecoder::Impl::DecodeEvents(const Block& b) {
  Cursor c(b.payload);
  uint64_t slot = c.Varint();
  uint64_t ticks = c.Fixed<uint64_t>();
  uint32_t count = c.Fixed<uint32_t>();
  if (!c.ok) return Error{Where(b.offset) + ": malformed events block"};
  const int64_t tid = slot < slot_tid.size() ? slot_tid[slot] : -1;
  if (tid < 0)
    return Error{Where(b.offset) + ": events of thread slot " + std::to_string(slot) +
                 " before its thread block"};
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t h = c.Varint();
    ticks += h >> 4;
    RawEvent e{};
    e.ticks = ticks;
    e.tid = tid;
    e.kind = h & 15;
    switch (e.kind) {
      case st::kPush:
      case st::kMark:
      case st::kRangeStart: {
        if (e.kind == st::kRangeStart) e.range_id = c.Varint();
        e.domain = c.Varint();
        e.name = c.Varint();
        e.flags = static_cast<uint8_t>(c.Varint());
        if (e.flags & st::kAttrCategory) e.category = c.Varint();
        if (e.flags & st::kAttrColor) e.color = c.Varint();
        if (e.flags & st::kAttrPayload) {
          e.payload_type = c.Fixed<uint8_t>();
          e.bits = c.Varint();
          if (e.payload_type == st::kPayloadI64 || e.payload_type == st::kPayloadI32) {
            e.bits = static_cast<uint64_t>(st::UnZigZag(e.bits));
          } else if (e.payload_type == st::kPayloadFloat) {
            float fv;
            uint32_t fb = static_cast<uint32_t>(e.bits);
            std::memcpy(&fv, &fb, 4);
            double dv = fv;
            std::memcpy(&e.bits, &dv, 8);
          }
        }
        break;
      }
      case st::kTaskBegin:
        e.domain = c.Varint();
        e.name = c.Varint();
        c.Varint();  // the task id and parent id: ITT's, not shown
        c.Varint();
        break;
      case st::kPop:
      case st::kTaskEnd:
        e.domain = c.Varint();
        break;
      case st::kRangeEnd:
        e.range_id = c.Varint();
        break;
      case st::kFrameBegin:
      case st::kFrameEnd:
        e.domain = c.Varint();
        e.range_id = c.Varint();  // the frame id
        break;
      case st::kCounterSet:
        e.name = c.Varint();
        e.bits = c.Varint();
        break;
      case st::kOpBegin:
        e.name = c.Varint();
        e.category = c.Varint();  // shapes
        e.color = c.Varint();     // dtypes
        e.stack = c.Varint();
        e.sequence = st::UnZigZag(c.Varint());
        e.forward_thread = c.Varint();
        e.flags = c.Fixed<uint8_t>();  // scope
        e.bits = c.Varint();           // flops
        break;
      case st::kMemory:
        e.bits = static_cast<uint64_t>(st::UnZigZag(c.Varint()));
        e.range_id = c.Varint();  // the address
        break;
      case st::kPause:
      case st::kResume:
      case st::kThreadEnd:
        break;
      default:
        return Error{Where(b.offset) + ": unknown event kind " + std::to_string(e.kind)};
    }
    if (!c.ok)
      return Error{Where(b.offset) + ": malformed event " + std::to_string(i) + " of " +
                   std::to_string(count)};
    if (preloaded) {
      Process(e);
    } else {
      pending.push_back(e);
    }
  }
  return Status::Ok();
}

Status StreamDecoder::Impl::HandleBlock(const Block& b) {
  Cursor c(b.payload);
  switch (b.type) {
    case st::kProcess:
      if (!has_process) {
        if (!ReadProcessBlock(c, &process))
          return Error{Where(b.offset) + ": malformed process block"};
        if (process.clock_kind != st::kClockTsc && process.clock_kind != st::kClockMonotonic) {
          return Error{owner.path() + ": unknown clock kind " + std::to_string(process.clock_kind)};
        }
        has_process = true;
      }
      break;
    case st::kConfig: {
      uint8_t flags = c.Fixed<uint8_t>();
      if (!c.ok) return Error{Where(b.offset) + ": malformed configuration block"};
      windowed = flags & (st::kConfigSchedule | st::kConfigCapture | st::kConfigOnDemand);
      break;
    }
    case st::kClock: {
      uint64_t ticks = c.Fixed<uint64_t>();
      int64_t mono = c.Fixed<int64_t>();
      int64_t real = c.Fixed<int64_t>();
      if (!c.ok) return Error{Where(b.offset) + ": malformed clock block"};
      if (!clock_fixed) {
        if (!have_clock) {
          ticks0 = ticks;
          mono0 = mono;
          real0 = real;
          slope = 1;
          have_clock = true;
        }
        if (process.clock_kind == st::kClockMonotonic) {
          slope = 1;
          ticks0 = static_cast<uint64_t>(mono0);
        } else if (ticks > ticks0 && mono > mono0) {
          slope = static_cast<double>(mono - mono0) / static_cast<double>(ticks - ticks0);
        }
      }
      round_ends.push_back(ticks);
      if (!windowed && windows.empty()) NewWindow(0, "whole run", false, 0);
      if (!preloaded) Release(false);
      break;
    }
    case st::kString: {
      uint64_t id = c.Varint();
      std::string_view text = c.Str();
      if (!c.ok || id > (1u << 28)) return Error{Where(b.offset) + ": malformed string block"};
      if (id >= strings.size()) {
        strings.resize(id + 1);
        has_string.resize(id + 1, false);
      }
      strings[id] = ValidUtf8(text);
      has_string[id] = true;
      break;
    }
    case st::kThread: {
      uint64_t slot = c.Varint();
      int64_t tid = c.Fixed<int64_t>();
      std::string_view name = c.Str();
      if (!c.ok || slot > (1u << 20)) return Error{Where(b.offset) + ": malformed thread block"};
      if (slot >= slot_tid.size()) slot_tid.resize(slot + 1, -1);
      // A new occupant of the slot: its drop counts start from zero.
      if (slot_tid[slot] != tid) drops_by_slot.erase(slot);
      slot_tid[slot] = tid;
      threads[tid] = true;
      if (!name.empty()) thread_names[tid] = ValidUtf8(name);
      break;
    }
    case st::kDomain: {
      uint64_t id = c.Varint();
      uint8_t source = c.Fixed<uint8_t>();
      std::string_view name = c.Str();
      if (!c.ok) return Error{Where(b.offset) + ": malformed domain block"};
      domains[id] = {ValidUtf8(name), source};
      break;
    }
    case st::kCategory: {
      uint64_t domain = c.Varint();
      uint64_t category = c.Varint();
      std::string_view name = c.Str();
      if (!c.ok) return Error{Where(b.offset) + ": malformed category block"};
      categories[{domain, category}] = ValidUtf8(name);
      break;
    }
    case st::kCounter: {
      uint64_t id = c.Varint();
      uint64_t domain = c.Varint();
      uint8_t type = c.Fixed<uint8_t>();
      std::string_view name = c.Str();
      if (!c.ok) return Error{Where(b.offset) + ": malformed counter block"};
      std::string full = ValidUtf8(name);
      if (domain != 0) full = DomainName(domain) + "/" + full;
      counters[id] = CounterDef{full, type};
      break;
    }
    case st::kOsThreadName: {
      int64_t tid = c.Fixed<int64_t>();
      std::string_view name = c.Str();
      if (!c.ok) return Error{Where(b.offset) + ": malformed thread-name block"};
      thread_names[tid] = ValidUtf8(name);
      break;
    }
    case st::kDrops: {
      uint64_t slot = c.Varint();
      std::array<uint64_t, 3> v{c.Varint(), c.Varint(), c.Varint()};
      if (!c.ok) return Error{Where(b.offset) + ": malformed drops block"};
      // Cumulative per slot occupant; a new occupant starts from zero again.
      auto& last = drops_by_slot[slot];
      for (int k = 0; k < 3; ++k) {
        slot_drops[k] += v[k] >= last[k] ? v[k] - last[k] : v[k];
        last[k] = v[k];
      }
      break;
    }
    case st::kProcessDrops: {
      uint64_t without_slot = c.Varint();
      uint64_t refused = c.Varint();
      process_metadata_refused = c.Varint();
      uint64_t after_close = c.Varint();
      if (!c.ok) return Error{Where(b.offset) + ": malformed process-drops block"};
      process_drops[0] = without_slot;
      process_drops[1] = refused;
      process_drops[2] = after_close;
      break;
    }
    case st::kNotice: {
      std::string_view text = c.Str();
      if (c.ok)
        summary.notices.push_back("pid " + std::to_string(process.pid) + ": " + ValidUtf8(text));
      break;
    }
    case st::kEnd:
      process.ended = true;
      process.end_reason = c.Fixed<uint8_t>();
      break;
    case st::kExec:
      process.ended = true;
      process.end_reason = st::kEndExec;
      process.exec_path = ValidUtf8(c.Str());
      break;
    case st::kExecFailed:
      process.ended = false;
      process.end_reason = 0;
      break;
    case st::kStep:
    case st::kCapture:
    case st::kStop:
    case st::kDemand:
      if (!preloaded) {
        Status s = Boundary(b);
        if (!s.ok()) return s;
      }
      break;
    case st::kEvents: {
      Status s = DecodeEvents(b);
      if (!s.ok()) return s;
      break;
    }
    default:
      break;  // unknown blocks: a newer runtime's additions
  }
  return Status::Ok();
}

Status StreamDecoder::Impl::Boundary(const Block& b) {
  Cursor c(b.payload);
  uint64_t ticks = c.Fixed<uint64_t>();
  switch (b.type) {
    case st::kStep: {
      int64_t step = c.Fixed<int64_t>();
      uint8_t action = c.Fixed<uint8_t>();
      if (!c.ok || action > 3) return Error{Where(b.offset) + ": malformed step block"};
      ++summary.steps;
      OnStep(ticks, step, static_cast<ProfilerAction>(action));
      break;
    }
    case st::kCapture: {
      uint8_t begin = c.Fixed<uint8_t>();
      if (!c.ok) return Error{Where(b.offset) + ": malformed capture block"};
      OnCapture(ticks, begin != 0);
      break;
    }
    case st::kDemand: {
      int64_t request = c.Fixed<int64_t>();
      c.Fixed<int64_t>();  // the first step
      if (!c.ok) return Error{Where(b.offset) + ": malformed on-demand block"};
      last_demand = static_cast<uint64_t>(request);
      break;
    }
    case st::kStop:
      if (!c.ok) return Error{Where(b.offset) + ": malformed stop block"};
      EndWindow(ticks);
      break;
    default:
      break;
  }
  return Status::Ok();
}

StreamDecoder::StreamDecoder(std::string path, WindowSink& sink, SessionSummary& summary,
                             std::vector<std::string>& warnings)
    : path_(std::move(path)), impl_(std::make_unique<Impl>(*this, sink, summary, warnings)) {}

StreamDecoder::~StreamDecoder() = default;

const StreamProcess& StreamDecoder::process() const {
  return impl_->process;
}
void StreamDecoder::SetLastImage(bool last) {
  impl_->last_image = last;
}
bool StreamDecoder::has_process() const {
  return impl_->has_process;
}

void StreamDecoder::SetClock(uint64_t ticks0, int64_t real0, double ns_per_tick) {
  impl_->clock_fixed = true;
  impl_->have_clock = true;
  impl_->ticks0 = ticks0;
  impl_->real0 = real0;
  impl_->slope = ns_per_tick;
}

Result<size_t> StreamDecoder::Feed(std::string_view data, size_t offset) {
  size_t pos = 0;
  if (offset == 0) {
    if (data.size() < sizeof(st::FileHeader)) return size_t{0};
    if (std::memcmp(data.data(), st::kMagic, 8) != 0)
      return Error{path_ + ": not a profsh stream (bad magic)"};
    st::FileHeader header;
    std::memcpy(&header, data.data(), sizeof header);
    if (header.version != st::kVersion) {
      return Error{path_ + ": stream version " + std::to_string(header.version) +
                   ", this profsh reads version " + std::to_string(st::kVersion)};
    }
    pos = header.header_size >= sizeof header && header.header_size <= data.size()
              ? header.header_size
              : sizeof header;
  }
  while (data.size() - pos >= sizeof(st::BlockHeader)) {
    st::BlockHeader h;
    std::memcpy(&h, data.data() + pos, sizeof h);
    if (h.size > data.size() - pos - sizeof h) break;  // still being written (or cut short)
    Status s = impl_->HandleBlock(Block{h.type, data.substr(pos + sizeof h, h.size), offset + pos});
    if (!s.ok()) return Error{s.message()};
    pos += sizeof h + h.size;
  }
  return pos;
}

Status StreamDecoder::PreloadBoundaries(std::string_view data) {
  Impl& m = *impl_;
  size_t pos = sizeof(st::FileHeader);
  while (pos + sizeof(st::BlockHeader) <= data.size()) {
    st::BlockHeader h;
    std::memcpy(&h, data.data() + pos, sizeof h);
    if (h.size > data.size() - pos - sizeof h) break;
    Block b{h.type, data.substr(pos + sizeof h, h.size), pos};
    if (b.type == st::kProcess || b.type == st::kConfig) {
      Status s = m.HandleBlock(b);
      if (!s.ok()) return s;
    } else if (b.type == st::kStep || b.type == st::kCapture || b.type == st::kStop ||
               b.type == st::kDemand) {
      Status s = m.Boundary(b);
      if (!s.ok()) return s;
    }
    pos += sizeof h + h.size;
  }
  if (!m.windowed && m.windows.empty()) m.NewWindow(0, "whole run", false, 0);
  m.preloaded = true;
  m.has_process = false;  // read again in order by Feed()
  m.process.env.clear();
  return Status::Ok();
}

void StreamDecoder::Finish() {
  Impl& m = *impl_;
  if (!m.windowed && m.windows.empty() && m.has_process) m.NewWindow(0, "whole run", false, 0);
  m.Release(true);
  // What is still open ends with the stream.
  std::vector<int64_t> tids;
  for (const auto& [key, stack] : m.open) {
    if (!stack.empty()) tids.push_back(static_cast<int64_t>(key >> 16));
  }
  for (int64_t tid : tids) m.CloseThread(tid, m.last_ticks, false);
  if (Impl::Window* w = m.OpenWindow()) {
    w->end_ticks = std::max(m.last_ticks, w->begin_ticks);
    w->info.end_ns = m.ToNs(w->end_ticks);
  }
  for (size_t i = m.window_base; i < m.WindowEnd(); ++i) m.Seal(i);
  // Ends of ids never started (in a windowed stream their start may simply lie outside).
  if (!m.windowed) m.summary.unknown_range_ends += m.range_ends.size();
  m.range_ends.clear();
  m.summary.threads += m.threads.size();
  m.summary.dropped_ranges += m.slot_drops[0];
  m.summary.dropped_events += m.slot_drops[1];
  m.summary.events_without_slot += m.process_drops[0];
  m.summary.strings_refused += m.process_drops[1];
  m.summary.events_after_close += m.process_drops[2];
  m.summary.memory_peak += m.memory_peak;
  m.summary.memory_at_end += m.memory_total;
  m.summary.metadata_refused += m.process_metadata_refused;
}

}  // namespace profsh
