// The one codec of the stream (stream_format.h): a typed struct per block with its Encode and
// Decode, the event record of kEvents blocks, and the block iterator every reader uses. The
// runtime encodes with it and the session layer decodes with it, so a field is spelled once.
//
// Header-only, no exceptions, no allocation when encoding: the injected runtime includes it.
// Encoding writes into any sink with `uint8_t* Room(size_t n)` (room for n bytes, or nullptr
// when out of memory), `void Advance(size_t n)`, `size_t size() const` and `uint8_t* At(size_t)`.
// Decoding reads through a bounds-checked Cursor: a malformed payload leaves `ok` false and
// never reads outside the block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "engine/stream/stream_format.h"

namespace profsh::stream {

// --- primitives ---

template <typename Sink>
void PutVarintTo(Sink& out, uint64_t v) {
  if (uint8_t* p = out.Room(10)) out.Advance(static_cast<size_t>(PutVarint(p, v) - p));
}
template <typename T, typename Sink>
void PutFixed(Sink& out, T v) {
  if (uint8_t* p = out.Room(sizeof(T))) {
    std::memcpy(p, &v, sizeof(T));
    out.Advance(sizeof(T));
  }
}
template <typename Sink>
void PutBytes(Sink& out, const void* data, size_t n) {
  if (n == 0) return;
  if (uint8_t* p = out.Room(n)) {
    std::memcpy(p, data, n);
    out.Advance(n);
  }
}
// "str": a varint length and that many bytes.
template <typename Sink>
void PutStr(Sink& out, std::string_view s) {
  PutVarintTo(out, s.size());
  PutBytes(out, s.data(), s.size());
}

struct Cursor {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;

  explicit Cursor(std::string_view s)
      : p(reinterpret_cast<const uint8_t*>(s.data())),
        end(reinterpret_cast<const uint8_t*>(s.data()) + s.size()) {}
  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) {
        ok = false;
        return 0;
      }
      const uint8_t b = *p++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    ok = false;
    return 0;
  }
  template <typename T>
  T Fixed() {
    T v{};
    if (end - p < static_cast<ptrdiff_t>(sizeof(T))) {
      ok = false;
      return v;
    }
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    return v;
  }
  std::string_view Str() {
    const uint64_t n = Varint();
    if (!ok || static_cast<uint64_t>(end - p) < n) {
      ok = false;
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
  bool AtEnd() const { return p == end; }
};

// --- block fields ---

// A block lists its fields once, in wire order, as `static void Fields(auto& self, auto& wire)`
// calling wire.Fixed / wire.Varint / wire.Str on each; PROFSH_BLOCK_CODEC makes Encode (the list
// with a FieldWriter) and Decode (the same list with a FieldReader) from it. A block with checks
// on what it read has `bool Valid() const`.
template <typename Sink>
struct FieldWriter {
  Sink& out;
  template <typename T>
  void Fixed(const T& v) {
    PutFixed(out, v);
  }
  template <typename T, size_t N>
  void Fixed(const T (&v)[N]) {
    PutBytes(out, v, sizeof v);
  }
  void Varint(uint64_t v) { PutVarintTo(out, v); }
  void Str(std::string_view s) { PutStr(out, s); }
};

struct FieldReader {
  Cursor& c;
  template <typename T>
  void Fixed(T& v) {
    v = c.Fixed<T>();
  }
  template <typename T, size_t N>
  void Fixed(T (&v)[N]) {
    for (T& x : v) x = c.Fixed<T>();
  }
  template <typename T>
  void Varint(T& v) {
    v = static_cast<T>(c.Varint());
  }
  void Str(std::string_view& s) { s = c.Str(); }
};

template <typename Block>
bool ValidBlock(const Block& b) {
  if constexpr (requires { b.Valid(); }) {
    return b.Valid();
  } else {
    return true;
  }
}

#define PROFSH_BLOCK_CODEC                              \
  template <typename Sink>                              \
  void Encode(Sink& out) const {                        \
    ::profsh::stream::FieldWriter<Sink> wire{out};      \
    Fields(*this, wire);                                \
  }                                                     \
  bool Decode(::profsh::stream::Cursor& c) {            \
    ::profsh::stream::FieldReader wire{c};              \
    Fields(*this, wire);                                \
    return c.ok && ::profsh::stream::ValidBlock(*this); \
  }

// --- blocks ---

// Appends header and payload; the size is patched once the payload is written.
template <typename Block, typename Sink>
void AppendBlockTo(Sink& out, const Block& block) {
  const size_t at = out.size();
  PutFixed(out, BlockHeader{Block::kType, 0});
  block.Encode(out);
  if (out.size() < at + sizeof(BlockHeader)) return;  // out of memory: the sink failed
  const uint32_t size = static_cast<uint32_t>(out.size() - at - sizeof(BlockHeader));
  std::memcpy(out.At(at) + offsetof(BlockHeader, size), &size, sizeof size);
}

// A launcher variable (RANK, LOCAL_RANK, ...) of the process block.
struct EnvVar {
  std::string_view key, value;
};

struct ProcessBlock {
  static constexpr BlockType kType = kProcess;
  int64_t pid = 0, ppid = 0, start_ns = 0;  // start: CLOCK_REALTIME
  uint32_t exec_index = 0;
  uint32_t clock_kind = 0;        // ClockKind
  std::string_view command_line;  // arguments separated by '\0'
  std::string_view executable, hostname;
  const EnvVar* env = nullptr;  // Encode: env_count variables
  uint32_t env_count = 0;

  template <typename Sink>
  void Encode(Sink& out) const {
    PutFixed(out, pid);
    PutFixed(out, ppid);
    PutFixed(out, start_ns);
    PutFixed(out, exec_index);
    PutFixed(out, clock_kind);
    PutStr(out, command_line);
    PutStr(out, executable);
    PutStr(out, hostname);
    PutVarintTo(out, env_count);
    for (uint32_t i = 0; i < env_count; ++i) {
      PutStr(out, env[i].key);
      PutStr(out, env[i].value);
    }
  }
  // The variables are handed to `on_var(EnvVar)` in order.
  template <typename OnVar>
  bool Decode(Cursor& c, OnVar&& on_var) {
    pid = c.Fixed<int64_t>();
    ppid = c.Fixed<int64_t>();
    start_ns = c.Fixed<int64_t>();
    exec_index = c.Fixed<uint32_t>();
    clock_kind = c.Fixed<uint32_t>();
    command_line = c.Str();
    executable = c.Str();
    hostname = c.Str();
    const uint64_t n = c.Varint();
    for (uint64_t i = 0; i < n && c.ok; ++i) {
      EnvVar v{c.Str(), {}};
      v.value = c.Str();
      if (c.ok) on_var(v);
    }
    env_count = static_cast<uint32_t>(n);
    return c.ok;
  }
};

struct ClockBlock {
  static constexpr BlockType kType = kClock;
  uint64_t ticks = 0;
  int64_t monotonic_ns = 0, realtime_ns = 0;

  static void Fields(auto& self, auto& wire) {
    wire.Fixed(self.ticks);
    wire.Fixed(self.monotonic_ns);
    wire.Fixed(self.realtime_ns);
  }
  PROFSH_BLOCK_CODEC
};

struct StringBlock {
  static constexpr BlockType kType = kString;
  static constexpr uint64_t kMaxId = uint64_t{1} << 28;  // a reader's sanity bound
  uint64_t id = 0;
  std::string_view text;

  static void Fields(auto& self, auto& wire) {
    wire.Varint(self.id);
    wire.Str(self.text);
  }
  bool Valid() const { return id <= kMaxId; }
  PROFSH_BLOCK_CODEC
};

struct ThreadBlock {
  static constexpr BlockType kType = kThread;
  static constexpr uint64_t kMaxSlot = uint64_t{1} << 20;
  uint64_t slot = 0;
  int64_t tid = 0;
  std::string_view name;  // empty until named

  static void Fields(auto& self, auto& wire) {
    wire.Varint(self.slot);
    wire.Fixed(self.tid);
    wire.Str(self.name);
  }
  bool Valid() const { return slot <= kMaxSlot; }
  PROFSH_BLOCK_CODEC
};

// The head of a kEvents block; `count` events (EncodeEvent) follow.
struct EventsHeader {
  static constexpr BlockType kType = kEvents;
  uint64_t slot = 0;
  uint64_t first_ticks = 0;
  uint32_t count = 0;

  static void Fields(auto& self, auto& wire) {
    wire.Varint(self.slot);
    wire.Fixed(self.first_ticks);
    wire.Fixed(self.count);
  }
  PROFSH_BLOCK_CODEC
};

// Cumulative per thread slot occupant: the last block of a slot holds its totals.
struct DropsBlock {
  static constexpr BlockType kType = kDrops;
  uint64_t slot = 0;
  uint64_t dropped_ranges = 0, dropped_events = 0, unmatched_pops = 0;

  static void Fields(auto& self, auto& wire) {
    wire.Varint(self.slot);
    wire.Varint(self.dropped_ranges);
    wire.Varint(self.dropped_events);
    wire.Varint(self.unmatched_pops);
  }
  PROFSH_BLOCK_CODEC
};

struct DomainBlock {
  static constexpr BlockType kType = kDomain;
  uint64_t id = 0;
  uint8_t source = 0;  // Source
  std::string_view name;

  static void Fields(auto& self, auto& wire) {
    wire.Varint(self.id);
    wire.Fixed(self.source);
    wire.Str(self.name);
  }
  PROFSH_BLOCK_CODEC
};

struct CategoryBlock {
  static constexpr BlockType kType = kCategory;
  uint64_t domain = 0, id = 0;
  std::string_view name;

  static void Fields(auto& self, auto& wire) {
    wire.Varint(self.domain);
    wire.Varint(self.id);
    wire.Str(self.name);
  }
  PROFSH_BLOCK_CODEC
};

struct CounterBlock {
  static constexpr BlockType kType = kCounter;
  uint64_t id = 0, domain = 0;
  uint8_t value_type = 0;  // CounterType
  std::string_view name;

  static void Fields(auto& self, auto& wire) {
    wire.Varint(self.id);
    wire.Varint(self.domain);
    wire.Fixed(self.value_type);
    wire.Str(self.name);
  }
  PROFSH_BLOCK_CODEC
};

// A thread named from another thread (nvtxNameOsThread).
struct OsThreadNameBlock {
  static constexpr BlockType kType = kOsThreadName;
  int64_t tid = 0;
  std::string_view name;

  static void Fields(auto& self, auto& wire) {
    wire.Fixed(self.tid);
    wire.Str(self.name);
  }
  PROFSH_BLOCK_CODEC
};

struct EndBlock {
  static constexpr BlockType kType = kEnd;
  uint8_t reason = kEndExit;  // EndReason

  static void Fields(auto& self, auto& wire) { wire.Fixed(self.reason); }
  PROFSH_BLOCK_CODEC
};

struct ExecBlock {
  static constexpr BlockType kType = kExec;
  std::string_view path;  // of the new image

  static void Fields(auto& self, auto& wire) { wire.Str(self.path); }
  PROFSH_BLOCK_CODEC
};

struct ExecFailedBlock {
  static constexpr BlockType kType = kExecFailed;
  template <typename Sink>
  void Encode(Sink&) const {}
  bool Decode(Cursor&) { return true; }
};

struct NoticeBlock {
  static constexpr BlockType kType = kNotice;
  std::string_view text;

  static void Fields(auto& self, auto& wire) { wire.Str(self.text); }
  PROFSH_BLOCK_CODEC
};

struct NameCountsBlock {
  static constexpr BlockType kType = kNameCounts;
  uint32_t n = 0;
  uint32_t names[kMostFrequentNames] = {};
  uint64_t counts[kMostFrequentNames] = {};

  template <typename Sink>
  void Encode(Sink& out) const {
    PutVarintTo(out, n);
    for (uint32_t i = 0; i < n; ++i) {
      PutVarintTo(out, names[i]);
      PutVarintTo(out, counts[i]);
    }
  }
  bool Decode(Cursor& c) {
    const uint64_t count = c.Varint();
    if (count > kMostFrequentNames) return false;
    n = static_cast<uint32_t>(count);
    for (uint32_t i = 0; i < n; ++i) {
      names[i] = static_cast<uint32_t>(c.Varint());
      counts[i] = c.Varint();
    }
    return c.ok;
  }
};

// Cumulative for the process image.
struct ProcessDropsBlock {
  static constexpr BlockType kType = kProcessDrops;
  uint64_t events_without_slot = 0, strings_refused = 0, metadata_refused = 0,
           events_after_close = 0;

  static void Fields(auto& self, auto& wire) {
    wire.Varint(self.events_without_slot);
    wire.Varint(self.strings_refused);
    wire.Varint(self.metadata_refused);
    wire.Varint(self.events_after_close);
  }
  PROFSH_BLOCK_CODEC
};

struct StepBlock {
  static constexpr BlockType kType = kStep;
  uint64_t ticks = 0;
  int64_t step = 0;
  uint8_t action = 0;  // ProfilerAction

  static void Fields(auto& self, auto& wire) {
    wire.Fixed(self.ticks);
    wire.Fixed(self.step);
    wire.Fixed(self.action);
  }
  bool Valid() const { return action <= 3; }
  PROFSH_BLOCK_CODEC
};

struct CaptureBlock {
  static constexpr BlockType kType = kCapture;
  uint64_t ticks = 0;
  uint8_t begin = 0;  // 1: the first capture range opened; 0: the last one closed

  static void Fields(auto& self, auto& wire) {
    wire.Fixed(self.ticks);
    wire.Fixed(self.begin);
  }
  PROFSH_BLOCK_CODEC
};

struct DemandBlock {
  static constexpr BlockType kType = kDemand;
  uint64_t ticks = 0;
  int64_t request = 0, first_step = 0;

  static void Fields(auto& self, auto& wire) {
    wire.Fixed(self.ticks);
    wire.Fixed(self.request);
    wire.Fixed(self.first_step);
  }
  PROFSH_BLOCK_CODEC
};

struct StopBlock {
  static constexpr BlockType kType = kStop;
  uint64_t ticks = 0;

  static void Fields(auto& self, auto& wire) { wire.Fixed(self.ticks); }
  PROFSH_BLOCK_CODEC
};

struct ConfigBlock {
  static constexpr BlockType kType = kConfig;
  uint8_t flags = 0;  // ConfigFlags
  // skip_first, wait, warmup, active, repeat, skip_first_wait
  int64_t schedule[6] = {};
  std::string_view step_marker, capture_range;

  bool windowed() const { return flags & (kConfigSchedule | kConfigCapture | kConfigOnDemand); }
  static void Fields(auto& self, auto& wire) {
    wire.Fixed(self.flags);
    wire.Fixed(self.schedule);
    wire.Str(self.step_marker);
    wire.Str(self.capture_range);
  }
  PROFSH_BLOCK_CODEC
};

// --- GPU activity (kGpuActivity) ---

// One record: its kind and up to kMaxFields numbers, in the order gpu_records.h lists them
// for the kind. A reader takes the fields it knows; a newer writer may append more.
struct GpuRecord {
  static constexpr uint32_t kMaxFields = 20;
  uint8_t kind = 0;  // GpuRecordKind
  uint32_t count = 0;
  uint64_t f[kMaxFields] = {};

  uint64_t operator[](uint32_t i) const { return i < count ? f[i] : 0; }
};
// The most bytes one record takes.
inline constexpr size_t kMaxGpuRecordBytes = 1 + 10 + GpuRecord::kMaxFields * 10;

inline uint8_t* EncodeGpuRecordAt(uint8_t* p, const GpuRecord& r) {
  *p++ = r.kind;
  const uint32_t n = r.count < GpuRecord::kMaxFields ? r.count : GpuRecord::kMaxFields;
  p = PutVarint(p, n);
  for (uint32_t i = 0; i < n; ++i) p = PutVarint(p, r.f[i]);
  return p;
}

// Writes a kGpuActivity block record by record: Begin, Add each, End patches size and count.
template <typename Sink>
class GpuBlockWriter {
 public:
  explicit GpuBlockWriter(Sink& out) : out_(out) {}
  void Begin() {
    at_ = out_.size();
    count_ = 0;
    PutFixed(out_, BlockHeader{kGpuActivity, 0});
    PutFixed(out_, uint32_t{0});
  }
  // False when the sink has no room (out of memory): the caller counts the record as lost.
  bool Add(const GpuRecord& r) {
    uint8_t* p = out_.Room(kMaxGpuRecordBytes);
    if (p == nullptr) return false;
    out_.Advance(static_cast<size_t>(EncodeGpuRecordAt(p, r) - p));
    ++count_;
    return true;
  }
  // Patches the block's size and count; returns the records written.
  uint32_t End() {
    if (out_.size() < at_ + sizeof(BlockHeader) + sizeof(uint32_t)) return 0;  // out of memory
    const uint32_t size = static_cast<uint32_t>(out_.size() - at_ - sizeof(BlockHeader));
    std::memcpy(out_.At(at_) + offsetof(BlockHeader, size), &size, sizeof size);
    std::memcpy(out_.At(at_) + sizeof(BlockHeader), &count_, sizeof count_);
    return count_;
  }

 private:
  Sink& out_;
  size_t at_ = 0;
  uint32_t count_ = 0;
};

// Reads the next record of a kGpuActivity block (after its u32 count).
inline bool DecodeGpuRecord(Cursor& c, GpuRecord* r) {
  r->kind = c.Fixed<uint8_t>();
  const uint64_t n = c.Varint();
  if (!c.ok || n > 4096) {
    c.ok = false;
    return false;
  }
  r->count = 0;
  for (uint64_t i = 0; i < n && c.ok; ++i) {
    const uint64_t v = c.Varint();
    if (i < GpuRecord::kMaxFields) r->f[r->count++] = v;
  }
  for (uint32_t i = r->count; i < GpuRecord::kMaxFields; ++i) r->f[i] = 0;
  return c.ok;
}

// --- events of a kEvents block ---

// A range's, mark's or range start's attributes (AttrFlags say which are set).
struct EventAttrs {
  uint8_t flags = 0;
  uint64_t category = 0;
  uint32_t color = 0;        // ARGB
  uint8_t payload_type = 0;  // PayloadType
  uint64_t payload = 0;      // the value's bits (signed types sign-extended to 64 bits)
};

// A PyTorch operator's fields (kOpBegin).
struct OpFields {
  uint64_t shapes = 0, dtypes = 0, stack = 0;  // string ids (0: not recorded)
  int64_t sequence = -1;                       // autograd sequence number (-1: none)
  uint64_t forward_thread = 0;                 // of a backward op (0: none)
  uint8_t scope = 0;                           // at::RecordScope
  uint64_t flops = 0;
};

// One event, decoded (or to be encoded). Which fields a kind uses is listed at EventKind.
struct StreamEvent {
  uint64_t ticks = 0;
  uint8_t kind = kPush;  // EventKind
  uint64_t domain = 0;
  uint64_t name = 0;       // string id; the counter id for kCounterSet
  uint64_t range_id = 0;   // kRangeStart, kRangeEnd
  uint64_t frame_id = 0;   // kFrameBegin, kFrameEnd (0: none)
  uint64_t task_id = 0;    // kTaskBegin (ITT's ids; 0: none)
  uint64_t parent_id = 0;  // kTaskBegin
  uint64_t value = 0;      // kCounterSet: the raw value (CounterSet's encoding undone)
  int64_t bytes = 0;       // kMemory: allocated (negative: freed)
  uint64_t address = 0;    // kMemory
  EventAttrs attrs;        // kPush, kMark, kRangeStart
  OpFields op;             // kOpBegin
};

// The most bytes one event takes: its head and at most nine varints of up to ten bytes, and a
// byte (payload type or scope).
inline constexpr size_t kMaxEventBytes = 10 + 9 * 10 + 1;

inline uint8_t* PutAttrsAt(uint8_t* p, const EventAttrs& a) {
  const uint8_t flags = a.flags & (kAttrCategory | kAttrColor | kAttrPayload);
  *p++ = flags;  // below 0x80: one varint byte
  if (flags & kAttrCategory) p = PutVarint(p, a.category);
  if (flags & kAttrColor) p = PutVarint(p, a.color);
  if (flags & kAttrPayload) {
    *p++ = a.payload_type;
    const bool is_signed = a.payload_type == kPayloadI64 || a.payload_type == kPayloadI32;
    p = PutVarint(p, is_signed ? ZigZag(static_cast<int64_t>(a.payload)) : a.payload);
  }
  return p;
}

// Writes `e` at `p` (kMaxEventBytes of room) after an event at `previous_ticks` (the block's
// first_ticks for its first event); returns the byte after it. Times never go backwards within
// a block: an earlier one is written as the previous time. One reservation per event, not per
// field: the drain encodes tens of millions of events a second.
// The kind is read before anything is written (a byte store may alias `e`), so that a caller
// that sets a constant kind gets that kind's code alone once this is inlined (the drain does,
// for plain pushes and pops).
__attribute__((always_inline)) inline uint8_t* EncodeEventAt(uint8_t* p, uint64_t previous_ticks,
                                                             const StreamEvent& e) {
  const uint8_t kind = e.kind;
  const uint64_t delta = e.ticks >= previous_ticks ? e.ticks - previous_ticks : 0;
  p = PutVarint(p, delta << 4 | kind);
  switch (kind) {
    case kPush:
    case kMark:
      p = PutVarint(p, e.domain);
      p = PutVarint(p, e.name);
      return PutAttrsAt(p, e.attrs);
    case kRangeStart:
      p = PutVarint(p, e.range_id);
      p = PutVarint(p, e.domain);
      p = PutVarint(p, e.name);
      return PutAttrsAt(p, e.attrs);
    case kPop:
    case kTaskEnd:
      return PutVarint(p, e.domain);
    case kRangeEnd:
      return PutVarint(p, e.range_id);
    case kFrameBegin:
    case kFrameEnd:
      p = PutVarint(p, e.domain);
      return PutVarint(p, e.frame_id);
    case kCounterSet:
      p = PutVarint(p, e.name);
      return PutVarint(p, e.value);
    case kTaskBegin:
      p = PutVarint(p, e.domain);
      p = PutVarint(p, e.name);
      p = PutVarint(p, e.task_id);
      return PutVarint(p, e.parent_id);
    case kOpBegin:
      p = PutVarint(p, e.name);
      p = PutVarint(p, e.op.shapes);
      p = PutVarint(p, e.op.dtypes);
      p = PutVarint(p, e.op.stack);
      p = PutVarint(p, ZigZag(e.op.sequence));
      p = PutVarint(p, e.op.forward_thread);
      *p++ = e.op.scope;
      return PutVarint(p, e.op.flops);
    case kMemory:
      p = PutVarint(p, ZigZag(e.bytes));
      return PutVarint(p, e.address);
    default:  // kPause, kResume, kThreadEnd: no fields
      return p;
  }
}

template <typename Sink>
void EncodeEvent(Sink& out, uint64_t previous_ticks, const StreamEvent& e) {
  if (uint8_t* p = out.Room(kMaxEventBytes))
    out.Advance(static_cast<size_t>(EncodeEventAt(p, previous_ticks, e) - p));
}

inline bool GetAttrs(Cursor& c, EventAttrs* a) {
  a->flags = static_cast<uint8_t>(c.Varint());
  if (a->flags & kAttrCategory) a->category = c.Varint();
  if (a->flags & kAttrColor) a->color = static_cast<uint32_t>(c.Varint());
  if (a->flags & kAttrPayload) {
    a->payload_type = c.Fixed<uint8_t>();
    const uint64_t bits = c.Varint();
    const bool is_signed = a->payload_type == kPayloadI64 || a->payload_type == kPayloadI32;
    a->payload = is_signed ? static_cast<uint64_t>(UnZigZag(bits)) : bits;
  }
  return c.ok;
}

enum class EventStatus : uint8_t { kOk, kMalformed, kUnknownKind };

// Reads the next event; `ticks` is the previous event's time and becomes this one's.
inline EventStatus DecodeEvent(Cursor& c, uint64_t* ticks, StreamEvent* e) {
  const uint64_t head = c.Varint();
  *e = StreamEvent{};
  *ticks += head >> 4;
  e->ticks = *ticks;
  e->kind = static_cast<uint8_t>(head & 15);
  switch (e->kind) {
    case kPush:
    case kMark:
      e->domain = c.Varint();
      e->name = c.Varint();
      GetAttrs(c, &e->attrs);
      break;
    case kRangeStart:
      e->range_id = c.Varint();
      e->domain = c.Varint();
      e->name = c.Varint();
      GetAttrs(c, &e->attrs);
      break;
    case kPop:
    case kTaskEnd:
      e->domain = c.Varint();
      break;
    case kRangeEnd:
      e->range_id = c.Varint();
      break;
    case kFrameBegin:
    case kFrameEnd:
      e->domain = c.Varint();
      e->frame_id = c.Varint();
      break;
    case kCounterSet:
      e->name = c.Varint();
      e->value = c.Varint();
      break;
    case kTaskBegin:
      e->domain = c.Varint();
      e->name = c.Varint();
      e->task_id = c.Varint();
      e->parent_id = c.Varint();
      break;
    case kOpBegin:
      e->name = c.Varint();
      e->op.shapes = c.Varint();
      e->op.dtypes = c.Varint();
      e->op.stack = c.Varint();
      e->op.sequence = UnZigZag(c.Varint());
      e->op.forward_thread = c.Varint();
      e->op.scope = c.Fixed<uint8_t>();
      e->op.flops = c.Varint();
      break;
    case kMemory:
      e->bytes = UnZigZag(c.Varint());
      e->address = c.Varint();
      break;
    case kPause:
    case kResume:
    case kThreadEnd:
      break;
    default:
      return EventStatus::kUnknownKind;
  }
  return c.ok ? EventStatus::kOk : EventStatus::kMalformed;
}

// --- the file ---

inline FileHeader MakeFileHeader() {
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof h.magic);
  h.version = kVersion;
  h.header_size = sizeof h;
  return h;
}

enum class HeaderStatus : uint8_t { kOk, kShort, kBadMagic, kBadVersion, kBadSize };

// Checks a stream's file header; on kOk, `*blocks_at` is where its blocks start (header_size:
// a newer writer may add fields to the header).
inline HeaderStatus CheckFileHeader(std::string_view data, size_t* blocks_at,
                                    uint32_t* version = nullptr) {
  if (data.size() < sizeof(FileHeader)) {
    return data.size() >= sizeof kMagic && std::memcmp(data.data(), kMagic, sizeof kMagic) != 0
               ? HeaderStatus::kBadMagic
               : HeaderStatus::kShort;
  }
  FileHeader h;
  std::memcpy(&h, data.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return HeaderStatus::kBadMagic;
  if (version) *version = h.version;
  if (h.version != kVersion) return HeaderStatus::kBadVersion;
  if (h.header_size < sizeof h) return HeaderStatus::kBadSize;
  if (h.header_size > data.size()) return HeaderStatus::kShort;
  *blocks_at = h.header_size;
  return HeaderStatus::kOk;
}

struct RawBlock {
  uint32_t type = 0;
  std::string_view payload;
  size_t offset = 0;  // of the block header, from the start of the stream
};

// Walks whole blocks of `data`, which starts `base` bytes into the stream. Next() stops before
// a block that is not complete yet (still being written, or cut by a kill): `consumed()` is then
// where it starts.
class BlockIterator {
 public:
  BlockIterator(std::string_view data, size_t start, size_t base = 0)
      : data_(data), pos_(start), base_(base) {}
  bool Next(RawBlock* block) {
    if (data_.size() - pos_ < sizeof(BlockHeader)) return false;
    BlockHeader h;
    std::memcpy(&h, data_.data() + pos_, sizeof h);
    if (h.size > data_.size() - pos_ - sizeof h) return false;
    *block = RawBlock{h.type, data_.substr(pos_ + sizeof h, h.size), base_ + pos_};
    pos_ += sizeof h + h.size;
    return true;
  }
  size_t consumed() const { return pos_; }
  // Bytes after the last whole block.
  bool has_partial_block() const { return pos_ < data_.size(); }

 private:
  std::string_view data_;
  size_t pos_;
  size_t base_;
};

}  // namespace profsh::stream
