// Reader for profsh's binary trace format (see engine/trace/profsh_format.h). Every count, offset
// and id is checked before use, so a damaged file is an error message, never a crash.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/importers/importer.h"
#include "engine/trace/profsh_format.h"

namespace profsh {

namespace {

class Reader {
 public:
  Reader(const char* data, size_t size, const std::string& path, const char* section)
      : p_(data), end_(data + size), path_(path), section_(section) {}

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

  template <typename T>
  T Pod() {
    T v{};
    if (!Need(sizeof(T))) return v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  template <typename Vector>
  bool Array(Vector* out) {
    using T = typename Vector::value_type;
    uint64_t n = Pod<uint64_t>();
    if (!ok()) return false;
    if (n > remaining() / sizeof(T))
      return Fail("array of " + std::to_string(n) + " elements runs past the section");
    out->resize(n);
    if (n > 0) std::memcpy(out->data(), p_, n * sizeof(T));
    p_ += n * sizeof(T);
    Skip((8 - (n * sizeof(T)) % 8) % 8);
    return ok();
  }
  bool Bytes(std::string* out) {
    uint64_t n = Pod<uint64_t>();
    if (!ok()) return false;
    if (n > remaining())
      return Fail("string of " + std::to_string(n) + " bytes runs past the section");
    out->assign(p_, n);
    p_ += n;
    Skip((8 - n % 8) % 8);
    return ok();
  }
  bool Fail(const std::string& what) {
    if (error_.empty())
      error_ = path_ + ": corrupt profsh trace: section " + section_ + ": " + what;
    return false;
  }

 private:
  bool Need(size_t n) {
    if (remaining() < n) return Fail("ends early");
    return true;
  }
  void Skip(size_t n) {
    if (Need(n)) p_ += n;
  }
  const char* p_;
  const char* end_;
  const std::string& path_;
  const char* section_;
  std::string error_;
};

std::string TagName(uint32_t tag) {
  std::string s(4, ' ');
  for (int i = 0; i < 4; ++i) {
    char c = static_cast<char>((tag >> (8 * i)) & 0xff);
    s[i] = (c >= 32 && c < 127) ? c : '?';
  }
  return s;
}

class ProfshFormatImporter final : public Importer {
 public:
  std::string_view name() const override { return "profsh"; }
  bool CanRead(std::string_view head) const override {
    return head.size() >= sizeof(format::kMagic) &&
           std::memcmp(head.data(), format::kMagic, sizeof(format::kMagic)) == 0;
  }

  Result<std::unique_ptr<Trace>> Read(InputSource& input) const override {
    std::string owned;
    std::string_view data = input.WholeContent();
    if (data.empty()) {
      // Compressed: inflate fully; the binary format is small and read in one piece.
      std::vector<char> chunk(1 << 20);
      while (true) {
        auto n = input.Read(chunk.data(), chunk.size());
        if (!n.ok()) return n.error();
        if (n.value() == 0) break;
        owned.append(chunk.data(), n.value());
      }
      data = owned;
    }
    return Parse(data, input.path());
  }

 private:
  static Result<std::unique_ptr<Trace>> Parse(std::string_view data, const std::string& path) {
    constexpr size_t kHeader = 8 + 4 + 4 + 8 + 8;
    if (data.size() < kHeader)
      return Error{path + ": truncated profsh trace (header is cut short)"};
    uint32_t version, flags;
    uint64_t sections;
    std::memcpy(&version, data.data() + 8, 4);
    std::memcpy(&flags, data.data() + 12, 4);
    std::memcpy(&sections, data.data() + 16, 8);
    if (version != format::kVersion) {
      return Error{path + ": profsh trace format version " + std::to_string(version) +
                   " is not supported (this profsh reads version " +
                   std::to_string(format::kVersion) + ")"};
    }
    if ((flags & format::kFlagLittleEndian) == 0) {
      return Error{path + ": profsh trace was written on a big-endian machine; not supported"};
    }
    auto trace = std::make_unique<Trace>();
    Trace& t = *trace;
    size_t pos = kHeader;
    std::vector<uint64_t> string_offsets;
    std::string string_bytes;
    RawArgs args;
    RawEvents events;
    bool seen[9] = {};
    for (uint64_t s = 0; s < sections; ++s) {
      if (data.size() - pos < 16) {
        return Error{path + ": truncated profsh trace (section " + std::to_string(s) +
                     " header is cut short)"};
      }
      uint32_t tag;
      uint64_t size;
      std::memcpy(&tag, data.data() + pos, 4);
      std::memcpy(&size, data.data() + pos + 8, 8);
      pos += 16;
      if (size > data.size() - pos) {
        return Error{path + ": truncated profsh trace (section " + TagName(tag) + " needs " +
                     std::to_string(size) + " bytes, " + std::to_string(data.size() - pos) +
                     " left)"};
      }
      std::string name = TagName(tag);
      Reader r(data.data() + pos, size, path, name.c_str());
      pos += size;
      switch (tag) {
        case format::kTagInfo: {
          seen[0] = true;
          t.origin_ns = r.Pod<int64_t>();
          t.has_origin = r.Pod<uint64_t>() != 0;
          r.Bytes(&t.source_format);
          uint64_t nw = r.Pod<uint64_t>();
          for (uint64_t i = 0; i < nw && r.ok(); ++i) {
            std::string w;
            r.Bytes(&w);
            t.warnings.push_back(std::move(w));
          }
          break;
        }
        case format::kTagStrings:
          seen[1] = true;
          r.Array(&string_offsets);
          r.Bytes(&string_bytes);
          break;
        case format::kTagCategories:
          seen[2] = true;
          r.Array(&t.categories);
          break;
        case format::kTagTracks: {
          seen[3] = true;
          uint64_t n = r.Pod<uint64_t>();
          if (n > r.remaining() / 32) {
            r.Fail("track count " + std::to_string(n) + " runs past the section");
            break;
          }
          t.tracks.resize(n);
          for (auto& track : t.tracks) {
            for (Ident* id : {&track.pid, &track.tid}) {
              id->number = r.Pod<int64_t>();
              id->str = r.Pod<uint32_t>();
              id->is_string = r.Pod<uint32_t>() != 0;
            }
          }
          break;
        }
        case format::kTagMetadata: {
          seen[4] = true;
          uint64_t n = r.Pod<uint64_t>();
          for (uint64_t i = 0; i < n && r.ok(); ++i) {
            std::string k, v;
            r.Bytes(&k);
            r.Bytes(&v);
            t.metadata.emplace_back(std::move(k), std::move(v));
          }
          break;
        }
        case format::kTagArgs:
          seen[5] = true;
          r.Array(&args.words);
          r.Array(&args.offsets);
          r.Array(&args.arena);
          break;
        case format::kTagTemplates:
          seen[7] = true;
          r.Array(&events.templates);
          break;
        case format::kTagLongDurations:
          seen[8] = true;
          r.Array(&events.long_durations);
          break;
        case format::kTagEvents: {
          seen[6] = true;
          uint64_t n = r.Pod<uint64_t>();
          r.Array(&events.ts);
          r.Array(&events.dur);
          r.Array(&events.templ);
          r.Array(&events.args);
          if (r.ok() && (events.ts.size() != n || events.dur.size() != n ||
                         events.templ.size() != n || events.args.size() != n)) {
            r.Fail("event columns have different lengths");
          }
          break;
        }
        default:
          break;  // unknown sections from newer writers of the same version are skipped
      }
      if (!r.ok()) return Error{r.error()};
    }
    static const char* kNames[9] = {"INFO", "STRS", "CATS", "TRKS", "META",
                                    "ARGS", "EVTS", "TMPL", "LDUR"};
    for (int i = 0; i < 9; ++i) {
      if (!seen[i])
        return Error{path + ": corrupt profsh trace: section " + kNames[i] + " is missing"};
    }
    // Strings.
    if (string_offsets.empty())
      return Error{path + ": corrupt profsh trace: section STRS: no strings"};
    for (size_t i = 0; i + 1 < string_offsets.size(); ++i) {
      if (string_offsets[i] > string_offsets[i + 1] ||
          string_offsets[i + 1] > string_bytes.size()) {
        return Error{path + ": corrupt profsh trace: section STRS: bad offset at string " +
                     std::to_string(i)};
      }
      uint32_t id = t.strings.Intern(
          std::string_view(string_bytes)
              .substr(string_offsets[i], string_offsets[i + 1] - string_offsets[i]));
      if (id != i)
        return Error{path + ": corrupt profsh trace: section STRS: duplicate string " +
                     std::to_string(i)};
    }
    Status v = Validate(t, args, events, path);
    if (!v.ok()) return Error{v.message()};
    // Only validated tables may be indexed (the stores rehash what they intern on Assign).
    t.args.Assign(std::move(args.words), std::move(args.offsets), std::move(args.arena));
    t.events.Assign(std::move(events.ts), std::move(events.dur), std::move(events.templ),
                    std::move(events.args), std::move(events.templates),
                    std::move(events.long_durations));
    t.RebuildDerived();
    TrimLargeBlockCache();  // as a JSON load does: the blocks cached before are not the trace's
    return trace;
  }

  struct RawArgs {
    std::vector<uint32_t> words, offsets;
    LargeVector<uint32_t> arena;
  };
  struct RawEvents {
    LargeVector<int64_t> ts;
    LargeVector<uint32_t> dur, templ, args;
    std::vector<EventTemplate> templates;
    std::vector<LongDuration> long_durations;
  };

  static Status Validate(const Trace& t, const RawArgs& args, const RawEvents& ev,
                         const std::string& path) {
    auto fail = [&](const std::string& what) {
      return Error{path + ": corrupt profsh trace: " + what};
    };
    const uint32_t nstrings = t.strings.size();
    if (t.categories.empty() || t.categories[0] != 0)
      return fail("section CATS: entry 0 must be the empty category");
    for (uint32_t c : t.categories) {
      if (c >= nstrings) return fail("section CATS: string id out of range");
    }
    for (const Track& tr : t.tracks) {
      if ((tr.pid.is_string && tr.pid.str >= nstrings) ||
          (tr.tid.is_string && tr.tid.str >= nstrings)) {
        return fail("section TRKS: string id out of range");
      }
    }
    // Argument schemas.
    const auto& words = args.words;
    const auto& offsets = args.offsets;
    for (size_t s = 0; s < offsets.size(); ++s) {
      uint64_t off = offsets[s];
      if (off >= words.size()) return fail("section ARGS: schema offset out of range");
      uint64_t fields = words[off];
      if (fields > (words.size() - off - 1) / 4)
        return fail("section ARGS: schema runs past its table");
      for (uint64_t f = 0; f < fields; ++f) {
        const uint32_t* w = &words[off + 1 + f * 4];
        uint32_t type = w[1] & 0xff;
        if (w[0] >= nstrings) return fail("section ARGS: key id out of range");
        if (type > static_cast<uint32_t>(ArgType::kJson))
          return fail("section ARGS: unknown argument type");
        bool is_inline = (w[1] >> 9) & 1;
        uint32_t inline_words = (w[1] >> 10) & 3;
        if (is_inline && (inline_words < 1 || inline_words > 2))
          return fail("section ARGS: bad inline width");
        // Only numbers are kept inline; an inline string would be an unchecked string id.
        if (is_inline && type != static_cast<uint32_t>(ArgType::kInt) &&
            type != static_cast<uint32_t>(ArgType::kUInt) &&
            type != static_cast<uint32_t>(ArgType::kDouble))
          return fail("section ARGS: an inline value must be a number");
        if (!is_inline &&
            (type == static_cast<uint32_t>(ArgType::kString) ||
             type == static_cast<uint32_t>(ArgType::kJson)) &&
            w[2] >= nstrings) {
          return fail("section ARGS: string value id out of range");
        }
      }
    }
    // Templates, and the arena words each one's events need.
    const size_t ntracks = t.tracks.size();
    const size_t ncats = t.categories.size();
    std::vector<uint64_t> need(ev.templates.size(), 0);
    for (size_t k = 0; k < ev.templates.size(); ++k) {
      const EventTemplate& tp = ev.templates[k];
      std::string where = "section TMPL: template " + std::to_string(k) + ": ";
      if (tp.name >= nstrings) return fail(where + "name id out of range");
      if (tp.track >= ntracks) return fail(where + "track id out of range");
      if (EventTable::CategoryOf(tp.kind) >= ncats) return fail(where + "category out of range");
      if (tp.schema_plus_one == 0) continue;
      uint32_t schema = tp.schema_plus_one - 1;
      if (schema >= offsets.size()) return fail(where + "schema id out of range");
      need[k] = ArgStore::InlineWordCount(&words[offsets[schema]]);
    }
    const size_t arena = args.arena.size();
    size_t long_events = 0;
    for (size_t i = 0; i < ev.templ.size(); ++i) {
      if (ev.templ[i] >= ev.templates.size())
        return fail("event " + std::to_string(i) + ": template id out of range");
      uint64_t words_needed = need[ev.templ[i]];
      if (ev.args[i] > arena || words_needed > arena - ev.args[i])
        return fail("event " + std::to_string(i) + ": inline arguments run past the arena");
      long_events += ev.dur[i] == EventTable::kLongDuration;
    }
    uint64_t previous = 0;
    for (size_t k = 0; k < ev.long_durations.size(); ++k) {
      const LongDuration& d = ev.long_durations[k];
      if (d.event >= ev.dur.size() || ev.dur[d.event] != EventTable::kLongDuration ||
          (k > 0 && d.event <= previous)) {
        return fail("section LDUR: entry " + std::to_string(k) + " names no long event");
      }
      if (d.ns < EventTable::kLongDuration || ev.ts[d.event] > INT64_MAX - d.ns)
        return fail("section LDUR: entry " + std::to_string(k) + " has a duration out of range");
      previous = d.event;
    }
    if (long_events != ev.long_durations.size())
      return fail("section LDUR: " + std::to_string(long_events) + " events have long durations, " +
                  std::to_string(ev.long_durations.size()) + " are listed");
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Importer> MakeProfshFormatImporter() {
  return std::make_unique<ProfshFormatImporter>();
}

}  // namespace profsh
