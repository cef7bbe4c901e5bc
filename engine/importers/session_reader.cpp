#include "engine/importers/session_reader.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <queue>
#include <unordered_map>

#include "engine/collector/stream_format.h"
#include "engine/trace/trace_builder.h"
#include "engine/util/json_text.h"
#include "engine/util/utf8.h"

namespace profsh {

namespace {

namespace st = stream;

// A bounds-checked reader over one block's payload.
struct Cursor {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;

  Cursor(std::string_view s)
      : p(reinterpret_cast<const uint8_t*>(s.data())),
        end(reinterpret_cast<const uint8_t*>(s.data()) + s.size()) {}
  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) {
        ok = false;
        return 0;
      }
      uint8_t b = *p++;
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
    uint64_t n = Varint();
    if (!ok || static_cast<uint64_t>(end - p) < n) {
      ok = false;
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
};

// Text from the workload is bytes; the trace holds UTF-8.
std::string ValidUtf8(std::string_view s) {
  if (Utf8FirstInvalid(s) == std::string_view::npos) return std::string(s);
  std::string out;
  const auto* u = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(u + i, s.size() - i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

struct Block {
  uint32_t type;
  std::string_view payload;
  size_t offset;  // of the block header in the file
};

struct ClockPair {
  uint64_t ticks;
  int64_t mono;
  int64_t real;
};

struct StreamFile {
  std::string path;
  std::unique_ptr<InputSource> input;
  std::vector<Block> blocks;
  bool cut = false;  // the last block was incomplete
  size_t cut_at = 0;
  bool ended = false;  // kEnd seen, or kExec without kExecFailed after it
  uint8_t end_reason = 0;
  int64_t pid = 0, ppid = 0, start_ns = 0;
  uint32_t exec_index = 0, clock_kind = 0;
  bool is_last_image = true;  // no later exec of this pid: its command line names the process
  std::string cmdline, exe, host, exec_path;
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<ClockPair> clocks;
  // ticks -> absolute ns
  double slope = 1;
  uint64_t ticks0 = 0;
  int64_t real0 = 0;
  bool fitted = false;
};

std::string Where(const StreamFile& f, size_t offset) {
  return f.path + ": block at byte " + std::to_string(offset);
}

// Reads the file header and splits the stream into blocks; decodes kProcess and kClock.
Result<StreamFile> OpenStreamFile(const std::string& path) {
  StreamFile f;
  f.path = path;
  auto input = OpenInput(path);
  if (!input.ok()) return input.error();
  f.input = std::move(input.value());
  std::string_view data = f.input->WholeContent();
  if (data.empty() || f.input->compressed())
    return Error{path + ": not a profsh stream (expected an uncompressed .pstream file)"};
  if (data.size() < sizeof(st::FileHeader) || std::memcmp(data.data(), st::kMagic, 8) != 0) {
    return Error{path + ": not a profsh stream (bad magic)"};
  }
  st::FileHeader header;
  std::memcpy(&header, data.data(), sizeof header);
  if (header.version != st::kVersion) {
    return Error{path + ": stream version " + std::to_string(header.version) +
                 ", this profsh reads version " + std::to_string(st::kVersion)};
  }
  size_t pos = header.header_size >= sizeof header && header.header_size <= data.size()
                   ? header.header_size
                   : sizeof header;
  while (pos < data.size()) {
    if (data.size() - pos < sizeof(st::BlockHeader)) {
      f.cut = true;
      f.cut_at = pos;
      break;
    }
    st::BlockHeader h;
    std::memcpy(&h, data.data() + pos, sizeof h);
    if (h.size > data.size() - pos - sizeof h) {
      f.cut = true;
      f.cut_at = pos;
      break;
    }
    f.blocks.push_back({h.type, data.substr(pos + sizeof h, h.size), pos});
    pos += sizeof h + h.size;
  }
  bool have_process = false;
  for (const Block& b : f.blocks) {
    Cursor c(b.payload);
    if (b.type == st::kProcess && !have_process) {
      f.pid = c.Fixed<int64_t>();
      f.ppid = c.Fixed<int64_t>();
      f.start_ns = c.Fixed<int64_t>();
      f.exec_index = c.Fixed<uint32_t>();
      f.clock_kind = c.Fixed<uint32_t>();
      f.cmdline = ValidUtf8(c.Str());
      std::replace(f.cmdline.begin(), f.cmdline.end(), '\0', ' ');
      f.exe = ValidUtf8(c.Str());
      f.host = ValidUtf8(c.Str());
      uint64_t n = c.Varint();
      for (uint64_t i = 0; i < n && c.ok; ++i) {
        std::string key = ValidUtf8(c.Str());
        std::string value = ValidUtf8(c.Str());
        f.env.emplace_back(std::move(key), std::move(value));
      }
      if (!c.ok) return Error{Where(f, b.offset) + ": malformed process block"};
      have_process = true;
    } else if (b.type == st::kClock) {
      ClockPair p{c.Fixed<uint64_t>(), c.Fixed<int64_t>(), c.Fixed<int64_t>()};
      if (!c.ok) return Error{Where(f, b.offset) + ": malformed clock block"};
      f.clocks.push_back(p);
    } else if (b.type == st::kEnd) {
      f.ended = true;
      f.end_reason = c.Fixed<uint8_t>();
    } else if (b.type == st::kExec) {
      f.ended = true;
      f.end_reason = st::kEndExec;
      f.exec_path = ValidUtf8(c.Str());
    } else if (b.type == st::kExecFailed) {
      f.ended = false;
      f.end_reason = 0;
    }
  }
  if (!have_process)
    return Error{path + ": the stream has no process block (cut short at creation?)"};
  if (f.clock_kind != st::kClockTsc && f.clock_kind != st::kClockMonotonic) {
    return Error{path + ": unknown clock kind " + std::to_string(f.clock_kind)};
  }
  return f;
}

// ticks -> realtime: the rate from the monotonic clock over the stream's whole span (realtime
// may be stepped by NTP), the offset from realtime at the first pair.
void FitClock(StreamFile& f) {
  if (f.clocks.empty()) return;
  const ClockPair& a = f.clocks.front();
  const ClockPair& b = f.clocks.back();
  f.ticks0 = a.ticks;
  f.real0 = a.real;
  if (f.clock_kind == st::kClockMonotonic) {
    f.slope = 1;
    f.ticks0 = static_cast<uint64_t>(a.mono);
    f.real0 = a.real;
    f.fitted = true;
  } else if (b.ticks > a.ticks + 1000000 && b.mono > a.mono) {
    f.slope = static_cast<double>(b.mono - a.mono) / static_cast<double>(b.ticks - a.ticks);
    f.real0 = a.real;
    f.fitted = true;
  }
}

int64_t ToNs(const StreamFile& f, uint64_t ticks) {
  double d = static_cast<double>(static_cast<int64_t>(ticks - f.ticks0)) * f.slope;
  return f.real0 + static_cast<int64_t>(std::llround(d));
}

std::string ColorText(uint32_t argb) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%06x", argb & 0xffffff);
  return buf;
}

// Decodes one stream into the trace.
class StreamDecoder {
 public:
  StreamDecoder(StreamFile& f, TraceBuilder& builder, Trace& trace, int64_t origin,
                SessionSummary& summary, std::vector<std::string>& warnings)
      : f_(f),
        builder_(builder),
        trace_(trace),
        origin_(origin),
        summary_(summary),
        warnings_(warnings) {}

  Status Decode();

 private:
  struct Open {
    int64_t ns;
    uint32_t name;  // stream string id
    uint32_t schema;
    uint64_t payload_bits;
    bool has_payload;
    uint8_t kind;
  };
  struct OpenRange {
    int64_t ns;
    uint32_t name;
    uint32_t schema;
    uint64_t payload_bits;
    bool has_payload;
    int64_t tid;
  };
  struct DoneRange {
    int64_t begin, end;
    uint32_t name, schema;
    uint64_t payload_bits;
    bool has_payload;
    uint8_t flags;
    int64_t start_tid, end_tid;
  };

  std::string_view Text(uint64_t id) const {
    if (id < strings_.size() && has_string_[id]) return strings_[id];
    return "<profsh: unknown string>";
  }
  std::string DomainName(uint64_t d) const {
    auto it = domains_.find(d);
    return it == domains_.end() ? "domain " + std::to_string(d) : it->second.first;
  }
  uint32_t Schema(uint8_t source, uint64_t domain, uint8_t flags, uint64_t category, uint64_t color,
                  uint8_t payload_type);
  void Emit(char phase, int64_t ns, int64_t dur, std::string_view name, const char* category,
            Ident tid, uint32_t schema, bool has_payload, uint64_t payload_bits, uint8_t flags = 0);
  void CloseAll(int64_t tid, int64_t ns, bool thread_exit);
  Ident LaneTrack(size_t lane) {
    std::string name = "NVTX start/end ranges ";
    name += std::to_string(lane + 1);
    return Ident{0, trace_.strings.Intern(name), true};
  }
  Status DecodeEvents(const Block& b);

  StreamFile& f_;
  TraceBuilder& builder_;
  Trace& trace_;
  int64_t origin_;
  SessionSummary& summary_;
  std::vector<std::string>& warnings_;

  std::vector<std::string> strings_;
  std::vector<bool> has_string_;
  std::unordered_map<uint64_t, std::pair<std::string, uint8_t>> domains_;
  std::map<std::pair<uint64_t, uint64_t>, std::string> categories_;
  struct CounterDef {
    std::string name;
    uint8_t type;
  };
  std::unordered_map<uint64_t, CounterDef> counters_;
  std::unordered_map<int64_t, std::string> thread_names_;
  std::vector<int64_t> slot_tid_;
  std::map<int64_t, bool> threads_;  // tid -> seen
  // (tid, domain) -> open levels
  std::unordered_map<uint64_t, std::vector<Open>> open_;
  std::unordered_map<uint64_t, OpenRange> open_ranges_;
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> range_ends_;  // id -> (ns, tid)
  std::map<std::pair<uint64_t, uint64_t>, std::vector<int64_t>> open_frames_;
  std::vector<DoneRange> done_ranges_;
  std::unordered_map<std::string, uint32_t> schemas_;
  int64_t last_ns_ = 0;
  int64_t paused_at_ = -1;
  uint64_t slot_drops_[3] = {};
  uint64_t process_drops_[3] = {};
  std::map<uint64_t, std::array<uint64_t, 3>> drops_by_slot_;
  std::vector<uint32_t> words_;
};

uint32_t StreamDecoder::Schema(uint8_t source, uint64_t domain, uint8_t flags, uint64_t category,
                               uint64_t color, uint8_t payload_type) {
  if (domain == 0 && flags == 0) return TraceBuilder::kNoArgs;
  std::string key = std::to_string(domain) + "|" + std::to_string(flags) + "|" +
                    std::to_string(category) + "|" + std::to_string(color) + "|" +
                    std::to_string(payload_type);
  auto it = schemas_.find(key);
  if (it != schemas_.end()) return it->second;
  builder_.BeginArgs();
  ArgValue v;
  if (domain != 0) {
    std::string name = DomainName(domain);
    v.type = ArgType::kString;
    builder_.AddArg("domain", false, v, name, false);
  }
  if (flags & st::kAttrCategory) {
    auto c = categories_.find({domain, category});
    if (c != categories_.end()) {
      v.type = ArgType::kString;
      builder_.AddArg("category", false, v, c->second, false);
    } else {
      ArgValue n;
      n.type = ArgType::kInt;
      n.int_value = static_cast<int64_t>(category);
      builder_.AddArg("category", false, n, "", false);
    }
  }
  if (flags & st::kAttrColor) {
    v.type = ArgType::kString;
    builder_.AddArg("color", false, v, ColorText(static_cast<uint32_t>(color)), false);
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
    builder_.AddArg("payload", false, p, "", true);
  }
  (void)source;
  uint32_t schema = builder_.BuildSchema();
  schemas_.emplace(std::move(key), schema);
  return schema;
}

void StreamDecoder::Emit(char phase, int64_t ns, int64_t dur, std::string_view name,
                         const char* category, Ident tid, uint32_t schema, bool has_payload,
                         uint64_t payload_bits, uint8_t flags) {
  EventFields e;
  e.phase = phase;
  e.ts = ns - origin_;
  e.dur = dur;
  e.name = name;
  e.category = category;
  e.pid = Ident{f_.pid, 0, false};
  e.tid = tid;
  e.flags = flags;
  words_.clear();
  if (schema != TraceBuilder::kNoArgs && has_payload) {
    words_.push_back(static_cast<uint32_t>(payload_bits));
    words_.push_back(static_cast<uint32_t>(payload_bits >> 32));
  }
  builder_.AddEvent(e, schema, words_);
}

void StreamDecoder::CloseAll(int64_t tid, int64_t ns, bool thread_exit) {
  for (auto& [key, stack] : open_) {
    if (static_cast<int64_t>(key >> 16) != tid) continue;
    while (!stack.empty()) {
      const Open& o = stack.back();
      Emit('X', o.ns, ns - o.ns, Text(o.name), o.kind == st::kTaskBegin ? "itt" : "nvtx",
           Ident{tid, 0, false}, o.schema, o.has_payload, o.payload_bits, kFlagUnterminated);
      ++summary_.ranges;
      if (thread_exit) {
        ++summary_.open_at_thread_exit;
      } else {
        ++summary_.open_at_end;
      }
      stack.pop_back();
    }
  }
}

Status StreamDecoder::DecodeEvents(const Block& b) {
  Cursor c(b.payload);
  uint64_t slot = c.Varint();
  uint64_t ticks = c.Fixed<uint64_t>();
  uint32_t count = c.Fixed<uint32_t>();
  if (!c.ok) return Error{Where(f_, b.offset) + ": malformed events block"};
  const int64_t tid = slot < slot_tid_.size() ? slot_tid_[slot] : -1;
  if (tid < 0)
    return Error{Where(f_, b.offset) + ": events of thread slot " + std::to_string(slot) +
                 " before its thread block"};
  const Ident track{tid, 0, false};
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t h = c.Varint();
    ticks += h >> 4;
    const uint8_t kind = h & 15;
    const int64_t ns = ToNs(f_, ticks);
    last_ns_ = std::max(last_ns_, ns);
    switch (kind) {
      case st::kPush:
      case st::kMark:
      case st::kRangeStart: {
        uint64_t range_id = kind == st::kRangeStart ? c.Varint() : 0;
        uint64_t domain = c.Varint();
        uint64_t name = c.Varint();
        uint8_t flags = static_cast<uint8_t>(c.Varint());
        uint64_t category = (flags & st::kAttrCategory) ? c.Varint() : 0;
        uint64_t color = (flags & st::kAttrColor) ? c.Varint() : 0;
        uint8_t payload_type = 0;
        uint64_t bits = 0;
        if (flags & st::kAttrPayload) {
          payload_type = c.Fixed<uint8_t>();
          bits = c.Varint();
          switch (payload_type) {
            case st::kPayloadI64:
            case st::kPayloadI32:
              bits = static_cast<uint64_t>(st::UnZigZag(bits));
              break;
            case st::kPayloadFloat: {
              float fv;
              uint32_t fb = static_cast<uint32_t>(bits);
              std::memcpy(&fv, &fb, 4);
              double dv = fv;
              std::memcpy(&bits, &dv, 8);
              break;
            }
            default:
              break;
          }
        }
        if (!c.ok) break;
        uint32_t schema = Schema(st::kSourceNvtx, domain, flags, category, color, payload_type);
        const bool has_payload = flags & st::kAttrPayload;
        if (kind == st::kPush) {
          open_[static_cast<uint64_t>(tid) << 16 | domain].push_back(
              {ns, static_cast<uint32_t>(name), schema, bits, has_payload, st::kPush});
        } else if (kind == st::kMark) {
          Emit('i', ns, 0, Text(name), "nvtx", track, schema, has_payload, bits);
          ++summary_.marks;
        } else {
          // Paired when the whole stream is read: the end may come first, from another thread.
          open_ranges_[range_id] =
              OpenRange{ns, static_cast<uint32_t>(name), schema, bits, has_payload, tid};
        }
        break;
      }
      case st::kTaskBegin: {
        uint64_t domain = c.Varint();
        uint64_t name = c.Varint();
        c.Varint();  // task id
        c.Varint();  // parent id
        if (!c.ok) break;
        uint32_t schema = Schema(st::kSourceItt, domain, 0, 0, 0, 0);
        open_[static_cast<uint64_t>(tid) << 16 | domain].push_back(
            {ns, static_cast<uint32_t>(name), schema, 0, false, st::kTaskBegin});
        break;
      }
      case st::kPop:
      case st::kTaskEnd: {
        uint64_t domain = c.Varint();
        if (!c.ok) break;
        auto it = open_.find(static_cast<uint64_t>(tid) << 16 | domain);
        if (it == open_.end() || it->second.empty()) {
          ++summary_.unmatched_pops;
          break;
        }
        const Open& o = it->second.back();
        Emit('X', o.ns, ns - o.ns, Text(o.name), o.kind == st::kTaskBegin ? "itt" : "nvtx", track,
             o.schema, o.has_payload, o.payload_bits);
        ++summary_.ranges;
        it->second.pop_back();
        break;
      }
      case st::kRangeEnd: {
        uint64_t id = c.Varint();
        if (!c.ok) break;
        range_ends_[id] = {ns, tid};
        break;
      }
      case st::kFrameBegin:
      case st::kFrameEnd: {
        uint64_t domain = c.Varint();
        uint64_t frame = c.Varint();
        if (!c.ok) break;
        auto& stack = open_frames_[{domain, frame}];
        if (kind == st::kFrameBegin) {
          stack.push_back(ns);
        } else if (!stack.empty()) {
          int64_t begin = stack.back();
          stack.pop_back();
          std::string name = DomainName(domain) + " frame";
          Emit('X', begin, ns - begin, name, "itt_frame",
               Ident{0, trace_.strings.Intern("ITT frames"), true}, TraceBuilder::kNoArgs, false,
               0);
          ++summary_.ranges;
        } else {
          ++summary_.unmatched_pops;
        }
        break;
      }
      case st::kCounterSet: {
        uint64_t counter = c.Varint();
        uint64_t bits = c.Varint();
        if (!c.ok) break;
        auto it = counters_.find(counter);
        std::string name =
            it == counters_.end() ? "counter " + std::to_string(counter) : it->second.name;
        bool floating = it != counters_.end() && (it->second.type == st::kCounterFloat ||
                                                  it->second.type == st::kCounterDouble);
        builder_.BeginArgs();
        ArgValue v;
        if (floating) {
          v.type = ArgType::kDouble;
          std::memcpy(&v.double_value, &bits, 8);
        } else {
          v.type = ArgType::kInt;
          v.int_value = st::UnZigZag(bits);
        }
        builder_.AddArg("value", false, v, "", false);
        uint32_t schema = builder_.BuildSchema();
        Emit('C', ns, 0, name, "itt_counter", track, schema, false, 0);
        ++summary_.counter_values;
        break;
      }
      case st::kPause:
        paused_at_ = ns;
        break;
      case st::kResume:
        if (paused_at_ >= 0) {
          Emit('X', paused_at_, ns - paused_at_, "collection paused", "profsh",
               Ident{0, trace_.strings.Intern("profsh"), true}, TraceBuilder::kNoArgs, false, 0);
          paused_at_ = -1;
        }
        break;
      case st::kThreadEnd:
        CloseAll(tid, ns, true);
        break;
      default:
        return Error{Where(f_, b.offset) + ": unknown event kind " + std::to_string(kind)};
    }
    if (!c.ok)
      return Error{Where(f_, b.offset) + ": malformed event " + std::to_string(i) + " of " +
                   std::to_string(count)};
  }
  return Status::Ok();
}

Status StreamDecoder::Decode() {
  summary_.stream_bytes += f_.input->FileSize();
  for (const Block& b : f_.blocks) {
    Cursor c(b.payload);
    switch (b.type) {
      case st::kString: {
        uint64_t id = c.Varint();
        std::string_view text = c.Str();
        if (!c.ok || id > (1u << 28))
          return Error{Where(f_, b.offset) + ": malformed string block"};
        if (id >= strings_.size()) {
          strings_.resize(id + 1);
          has_string_.resize(id + 1, false);
        }
        strings_[id] = ValidUtf8(text);
        has_string_[id] = true;
        break;
      }
      case st::kThread: {
        uint64_t slot = c.Varint();
        int64_t tid = c.Fixed<int64_t>();
        std::string_view name = c.Str();
        if (!c.ok || slot > (1u << 20))
          return Error{Where(f_, b.offset) + ": malformed thread block"};
        if (slot >= slot_tid_.size()) slot_tid_.resize(slot + 1, -1);
        slot_tid_[slot] = tid;
        threads_[tid] = true;
        if (!name.empty()) thread_names_[tid] = ValidUtf8(name);
        break;
      }
      case st::kDomain: {
        uint64_t id = c.Varint();
        uint8_t source = c.Fixed<uint8_t>();
        std::string_view name = c.Str();
        if (!c.ok) return Error{Where(f_, b.offset) + ": malformed domain block"};
        domains_[id] = {ValidUtf8(name), source};
        break;
      }
      case st::kCategory: {
        uint64_t domain = c.Varint();
        uint64_t category = c.Varint();
        std::string_view name = c.Str();
        if (!c.ok) return Error{Where(f_, b.offset) + ": malformed category block"};
        categories_[{domain, category}] = ValidUtf8(name);
        break;
      }
      case st::kCounter: {
        uint64_t id = c.Varint();
        uint64_t domain = c.Varint();
        uint8_t type = c.Fixed<uint8_t>();
        std::string_view name = c.Str();
        if (!c.ok) return Error{Where(f_, b.offset) + ": malformed counter block"};
        std::string full = ValidUtf8(name);
        if (domain != 0) full = DomainName(domain) + "/" + full;
        counters_[id] = CounterDef{full, type};
        break;
      }
      case st::kOsThreadName: {
        int64_t tid = c.Fixed<int64_t>();
        std::string_view name = c.Str();
        if (!c.ok) return Error{Where(f_, b.offset) + ": malformed thread-name block"};
        thread_names_[tid] = ValidUtf8(name);
        break;
      }
      case st::kDrops: {
        uint64_t slot = c.Varint();
        std::array<uint64_t, 3> v{c.Varint(), c.Varint(), c.Varint()};
        if (!c.ok) return Error{Where(f_, b.offset) + ": malformed drops block"};
        // Cumulative per slot occupant; a new occupant starts from zero again.
        auto& last = drops_by_slot_[slot];
        for (int k = 0; k < 3; ++k) {
          if (v[k] >= last[k]) {
            slot_drops_[k] += v[k] - last[k];
          } else {
            slot_drops_[k] += v[k];
          }
          last[k] = v[k];
        }
        break;
      }
      case st::kProcessDrops: {
        uint64_t without_slot = c.Varint();
        uint64_t refused = c.Varint();
        c.Varint();  // metadata refused
        uint64_t after_close = c.Varint();
        if (!c.ok) return Error{Where(f_, b.offset) + ": malformed process-drops block"};
        process_drops_[0] = without_slot;
        process_drops_[1] = refused;
        process_drops_[2] = after_close;
        break;
      }
      case st::kNotice: {
        std::string_view text = c.Str();
        if (c.ok)
          summary_.notices.push_back("pid " + std::to_string(f_.pid) + ": " + ValidUtf8(text));
        break;
      }
      case st::kEvents: {
        Status s = DecodeEvents(b);
        if (!s.ok()) return s;
        break;
      }
      default:
        break;  // kProcess, kClock, kEnd, kExec, kExecFailed: read when the file was opened
    }
  }
  // What is still open ends with the stream.
  for (auto& [key, stack] : open_) CloseAll(static_cast<int64_t>(key >> 16), last_ns_, false);
  for (auto& [id, o] : open_ranges_) {
    auto end = range_ends_.find(id);
    if (end != range_ends_.end()) {
      done_ranges_.push_back({o.ns, std::max(o.ns, end->second.first), o.name, o.schema,
                              o.payload_bits, o.has_payload, 0, o.tid, end->second.second});
      range_ends_.erase(end);
    } else {
      done_ranges_.push_back({o.ns, last_ns_, o.name, o.schema, o.payload_bits, o.has_payload,
                              kFlagUnterminated, o.tid, -1});
      ++summary_.open_at_end;
    }
  }
  summary_.unknown_range_ends += range_ends_.size();
  open_ranges_.clear();
  range_ends_.clear();
  if (paused_at_ >= 0) {
    Emit('X', paused_at_, last_ns_ - paused_at_, "collection paused", "profsh",
         Ident{0, trace_.strings.Intern("profsh"), true}, TraceBuilder::kNoArgs, false, 0);
  }

  // Start/end ranges on lanes where they do not overlap (like Perfetto's async tracks).
  std::sort(done_ranges_.begin(), done_ranges_.end(), [](const DoneRange& a, const DoneRange& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
  });
  std::vector<int64_t> lane_end;
  for (const DoneRange& r : done_ranges_) {
    size_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > r.begin) ++lane;
    if (lane == lane_end.size()) lane_end.push_back(0);
    lane_end[lane] = r.end;
    Emit('X', r.begin, r.end - r.begin, Text(r.name), "nvtx", LaneTrack(lane), r.schema,
         r.has_payload, r.payload_bits, r.flags);
    ++summary_.ranges;
  }

  summary_.threads += threads_.size();
  summary_.dropped_ranges += slot_drops_[0];
  summary_.dropped_events += slot_drops_[1];
  summary_.events_without_slot += process_drops_[0];
  summary_.strings_refused += process_drops_[1];
  if (!f_.ended) ++summary_.cut_streams;

  // Names: the process (its command line, rank), its threads.
  auto meta = [&](const char* what, Ident tid, std::string_view key, std::string_view value) {
    builder_.BeginArgs();
    ArgValue v;
    v.type = ArgType::kString;
    builder_.AddArg(key, false, v, value, false);
    uint32_t schema = builder_.BuildSchema();
    EventFields e;
    e.phase = 'M';
    e.name = what;
    e.pid = Ident{f_.pid, 0, false};
    e.tid = tid;
    builder_.AddEvent(e, schema, {});
  };
  const Ident main_thread{f_.pid, 0, false};
  if (f_.is_last_image) {
    meta("process_name", main_thread, "name", f_.cmdline.empty() ? f_.exe : f_.cmdline);
    std::string labels;
    for (const auto& [k, v] : f_.env) {
      if (k == "RANK") labels = "rank " + v;
    }
    if (!labels.empty()) meta("process_labels", main_thread, "labels", labels);
  }
  for (size_t lane = 0; lane < lane_end.size(); ++lane) {
    meta("thread_name", LaneTrack(lane), "name", trace_.str(LaneTrack(lane).str));
  }
  for (const auto& [tid, seen] : threads_) {
    auto it = thread_names_.find(tid);
    std::string name = it != thread_names_.end()
                           ? it->second
                           : (tid == f_.pid ? "main thread" : "thread " + std::to_string(tid));
    meta("thread_name", Ident{tid, 0, false}, "name", name);
  }
  for (const auto& [tid, name] : thread_names_) {
    if (!threads_.count(tid)) meta("thread_name", Ident{tid, 0, false}, "name", name);
  }
  return Status::Ok();
}

std::string ProfshMetadata(const std::vector<StreamFile>& files, const SessionSummary& sum,
                           const std::string& path) {
  std::string j = "{\"session\": ";
  AppendJsonString(&j, path);
  j += ", \"processes\": [";
  for (size_t i = 0; i < files.size(); ++i) {
    const StreamFile& f = files[i];
    if (i) j += ", ";
    j += "{\"pid\": " + std::to_string(f.pid) + ", \"ppid\": " + std::to_string(f.ppid) +
         ", \"exec_index\": " + std::to_string(f.exec_index) + ", \"command\": ";
    AppendJsonString(&j, f.cmdline);
    j += ", \"executable\": ";
    AppendJsonString(&j, f.exe);
    j += ", \"host\": ";
    AppendJsonString(&j, f.host);
    j += ", \"ended\": ";
    AppendJsonString(&j, !f.ended                           ? "cut short (killed, or still running)"
                         : f.end_reason == stream::kEndExec ? "exec " + f.exec_path
                         : f.end_reason == stream::kEndUnderscoreExit ? "_exit"
                                                                      : "exit");
    j += ", \"environment\": {";
    for (size_t k = 0; k < f.env.size(); ++k) {
      if (k) j += ", ";
      AppendJsonString(&j, f.env[k].first);
      j += ": ";
      AppendJsonString(&j, f.env[k].second);
    }
    j += "}}";
  }
  j += "], \"dropped_ranges\": " + std::to_string(sum.dropped_ranges) +
       ", \"dropped_events\": " + std::to_string(sum.dropped_events) +
       ", \"events_without_thread_slot\": " + std::to_string(sum.events_without_slot) +
       ", \"strings_refused\": " + std::to_string(sum.strings_refused) +
       ", \"pops_without_push\": " + std::to_string(sum.unmatched_pops) +
       ", \"ends_of_unknown_ranges\": " + std::to_string(sum.unknown_range_ends) +
       ", \"ranges_open_at_thread_exit\": " + std::to_string(sum.open_at_thread_exit) +
       ", \"ranges_open_at_end\": " + std::to_string(sum.open_at_end) +
       ", \"streams_cut_short\": " + std::to_string(sum.cut_streams) + "}";
  return j;
}

void Warn(std::vector<std::string>& w, uint64_t n, const std::string& what) {
  if (n > 0) w.push_back(std::to_string(n) + " " + what);
}

Result<std::vector<std::string>> StreamPaths(const std::string& path, bool* folder) {
  struct stat st_buf;
  if (stat(path.c_str(), &st_buf) != 0)
    return Error{path + ": cannot open: " + std::strerror(errno)};
  *folder = S_ISDIR(st_buf.st_mode);
  if (!*folder) return std::vector<std::string>{path};
  DIR* d = opendir(path.c_str());
  if (d == nullptr) return Error{path + ": cannot read the folder: " + std::strerror(errno)};
  std::vector<std::string> out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() > std::strlen(st::kFileSuffix) && name.ends_with(st::kFileSuffix))
      out.push_back(path + "/" + name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  if (out.empty()) {
    return Error{path + ": is a directory, and holds no profsh streams (*" +
                 std::string(st::kFileSuffix) + ")"};
  }
  return out;
}

}  // namespace

bool IsSessionFolder(const std::string& path) {
  bool folder = false;
  auto paths = StreamPaths(path, &folder);
  return paths.ok() && folder;
}

Result<SessionLoad> LoadSession(const std::string& path) {
  bool folder = false;
  auto paths = StreamPaths(path, &folder);
  if (!paths.ok()) return paths.error();
  std::vector<StreamFile> files;
  for (const std::string& p : paths.value()) {
    auto f = OpenStreamFile(p);
    if (!f.ok()) return f.error();
    files.push_back(std::move(f.value()));
  }
  // Clocks: a TSC stream too short to measure the tick rate borrows the longest one's.
  const StreamFile* reference = nullptr;
  for (StreamFile& f : files) {
    FitClock(f);
    if (f.fitted && f.clock_kind == st::kClockTsc &&
        (!reference || f.clocks.back().ticks - f.clocks.front().ticks >
                           reference->clocks.back().ticks - reference->clocks.front().ticks)) {
      reference = &f;
    }
  }
  SessionLoad out;
  out.trace = std::make_unique<Trace>();
  std::vector<std::string> warnings;
  for (StreamFile& f : files) {
    if (f.fitted || f.clocks.empty()) continue;
    const ClockPair& a = f.clocks.front();
    const ClockPair& b = f.clocks.back();
    if (reference) {
      f.slope = reference->slope;
    } else if (b.ticks > a.ticks && b.mono > a.mono) {
      // A short process measures its own rate roughly, but its times span too little for the
      // error to matter.
      f.slope = static_cast<double>(b.mono - a.mono) / static_cast<double>(b.ticks - a.ticks);
    } else {
      f.slope = 1.0 / 3.0;
      warnings.push_back(
          f.path + ": no clock rate could be measured (one clock sample); its times are estimates");
    }
  }
  std::sort(files.begin(), files.end(), [](const StreamFile& a, const StreamFile& b) {
    return a.pid != b.pid ? a.pid < b.pid : a.exec_index < b.exec_index;
  });
  for (size_t i = 0; i + 1 < files.size(); ++i)
    files[i].is_last_image = files[i].pid != files[i + 1].pid;
  int64_t origin = INT64_MAX;
  for (const StreamFile& f : files) origin = std::min(origin, f.start_ns);

  Trace& trace = *out.trace;
  TraceBuilder builder(trace);
  builder.SetFormat("profsh-session");
  trace.source_path = path;
  trace.origin_ns = origin;
  trace.has_origin = true;
  SessionSummary& sum = out.summary;
  for (StreamFile& f : files) {
    if (f.clocks.empty()) {
      warnings.push_back(f.path + ": no clock block; its events are skipped");
      continue;
    }
    StreamDecoder decoder(f, builder, trace, origin, sum, warnings);
    Status s = decoder.Decode();
    if (!s.ok()) return Error{s.message()};
    ++sum.processes;
    if (f.cut) {
      warnings.push_back(f.path + ": ends in a partial block at byte " + std::to_string(f.cut_at) +
                         " (the process was killed while writing); everything before it is read");
    }
  }
  Warn(warnings, sum.dropped_ranges,
       "ranges not recorded: a thread's buffer was full (raise PROFSH_BUFFER_KB)");
  Warn(warnings, sum.dropped_events,
       "events not recorded: a thread's buffer was full (raise PROFSH_BUFFER_KB)");
  Warn(warnings, sum.events_without_slot,
       "events of threads beyond the collector's 1024 thread slots were not recorded");
  Warn(warnings, sum.strings_refused, "names were refused (the collector's string table was full)");
  Warn(warnings, sum.unmatched_pops, "pops (or ends) without a matching push (or begin)");
  Warn(warnings, sum.unknown_range_ends, "ends of range ids that were never started");
  Warn(warnings, sum.open_at_thread_exit,
       "ranges were still open when their thread exited (ended there)");
  Warn(warnings, sum.open_at_end,
       "ranges were still open when their process ended or was killed (ended at its last event)");
  Warn(warnings, sum.cut_streams,
       "processes did not finish their stream (killed, or still running); events up to their last "
       "drain are kept");
  for (const std::string& n : sum.notices) warnings.push_back(n);
  Status st = builder.AddMetadata("profsh", ProfshMetadata(files, sum, path));
  if (!st.ok()) return Error{st.message()};
  st = builder.Finish();
  if (!st.ok()) return Error{st.message()};
  trace.warnings.insert(trace.warnings.end(), warnings.begin(), warnings.end());
  return out;
}

namespace {

class StreamImporter final : public Importer {
 public:
  std::string_view name() const override { return "profsh-stream"; }
  bool CanRead(std::string_view head) const override {
    return head.size() >= 8 && std::memcmp(head.data(), st::kMagic, 8) == 0;
  }
  Result<std::unique_ptr<Trace>> Read(InputSource& input) const override {
    auto load = LoadSession(input.path());
    if (!load.ok()) return load.error();
    return std::move(load.value().trace);
  }
};

}  // namespace

std::unique_ptr<Importer> MakeStreamImporter() {
  return std::make_unique<StreamImporter>();
}

}  // namespace profsh
