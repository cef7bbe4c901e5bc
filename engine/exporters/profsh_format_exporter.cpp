#include <cstring>

#include "engine/exporters/exporter.h"
#include "engine/trace/profsh_format.h"

namespace profsh {

namespace {

class SectionWriter {
 public:
  explicit SectionWriter(AtomicWriter& out) : out_(out) {}

  void Begin(uint32_t tag) {
    tag_ = tag;
    payload_.clear();
  }
  template <typename T>
  void Pod(T v) {
    payload_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  template <typename Vector>
  void Array(const Vector& v) {
    using T = typename Vector::value_type;
    Pod<uint64_t>(v.size());
    payload_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    Pad();
  }
  void Bytes(std::string_view s) {
    Pod<uint64_t>(s.size());
    payload_.append(s);
    Pad();
  }
  void End() {
    Pad();
    uint32_t header[2] = {tag_, 0};
    uint64_t size = payload_.size();
    out_.Write(reinterpret_cast<const char*>(header), sizeof(header));
    out_.Write(reinterpret_cast<const char*>(&size), sizeof(size));
    out_.Write(payload_);
  }
  // Large columns go straight to the writer, not through the payload buffer.
  template <typename Vector>
  void DirectColumn(const Vector& v) {
    using T = typename Vector::value_type;
    uint64_t n = v.size();
    out_.Write(reinterpret_cast<const char*>(&n), sizeof(n));
    out_.Write(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    size_t pad = (8 - (v.size() * sizeof(T)) % 8) % 8;
    static const char zeros[8] = {};
    out_.Write(zeros, pad);
  }
  static uint64_t ColumnBytes(size_t n, size_t elem) { return 8 + ((n * elem + 7) / 8) * 8; }

 private:
  void Pad() {
    while (payload_.size() % 8 != 0) payload_.push_back('\0');
  }
  AtomicWriter& out_;
  uint32_t tag_ = 0;
  std::string payload_;
};

class ProfshFormatExporter final : public Exporter {
 public:
  std::string_view name() const override { return "profsh"; }

  Status Write(const Trace& trace, const ExportOptions&, AtomicWriter& out) const override {
    out.Write(format::kMagic, sizeof(format::kMagic));
    uint32_t version = format::kVersion, flags = format::kFlagLittleEndian;
    uint64_t sections = 9, reserved = 0;
    out.Write(reinterpret_cast<const char*>(&version), 4);
    out.Write(reinterpret_cast<const char*>(&flags), 4);
    out.Write(reinterpret_cast<const char*>(&sections), 8);
    out.Write(reinterpret_cast<const char*>(&reserved), 8);

    SectionWriter s(out);
    s.Begin(format::kTagInfo);
    s.Pod<int64_t>(trace.origin_ns);
    s.Pod<uint64_t>(trace.has_origin ? 1 : 0);
    s.Bytes(trace.source_format);
    s.Pod<uint64_t>(trace.warnings.size());
    for (const auto& w : trace.warnings) s.Bytes(w);
    s.End();

    s.Begin(format::kTagStrings);
    const uint32_t n = trace.strings.size();
    std::vector<uint64_t> offsets(n + 1);
    std::string bytes;
    bytes.reserve(trace.strings.TotalStringBytes());
    for (uint32_t i = 0; i < n; ++i) {
      offsets[i] = bytes.size();
      bytes.append(trace.strings.Get(i));
    }
    offsets[n] = bytes.size();
    s.Array(offsets);
    s.Bytes(bytes);
    s.End();

    s.Begin(format::kTagCategories);
    s.Array(trace.categories);
    s.End();

    s.Begin(format::kTagTracks);
    s.Pod<uint64_t>(trace.tracks.size());
    for (const Track& t : trace.tracks) {
      for (const Ident* id : {&t.pid, &t.tid}) {
        s.Pod<int64_t>(id->number);
        s.Pod<uint32_t>(id->str);
        s.Pod<uint32_t>(id->is_string ? 1 : 0);
      }
    }
    s.End();

    s.Begin(format::kTagMetadata);
    s.Pod<uint64_t>(trace.metadata.size());
    for (const auto& [k, v] : trace.metadata) {
      s.Bytes(k);
      s.Bytes(v);
    }
    s.End();

    s.Begin(format::kTagArgs);
    s.Array(trace.args.schema_words());
    s.Array(trace.args.schema_offsets());
    s.Array(trace.args.arena());
    s.End();

    const EventTable& ev = trace.events;
    s.Begin(format::kTagTemplates);
    s.Array(ev.templates());
    s.End();

    s.Begin(format::kTagLongDurations);
    s.Array(ev.long_durations());
    s.End();

    uint32_t header[2] = {format::kTagEvents, 0};
    uint64_t count = ev.size();
    uint64_t size =
        8 + SectionWriter::ColumnBytes(count, 8) + SectionWriter::ColumnBytes(count, 4) * 3;
    out.Write(reinterpret_cast<const char*>(header), sizeof(header));
    out.Write(reinterpret_cast<const char*>(&size), sizeof(size));
    out.Write(reinterpret_cast<const char*>(&count), sizeof(count));
    s.DirectColumn(ev.ts_column());
    s.DirectColumn(ev.dur_column());
    s.DirectColumn(ev.template_column());
    s.DirectColumn(ev.args_column());
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Exporter> MakeProfshFormatExporter() {
  return std::make_unique<ProfshFormatExporter>();
}

}  // namespace profsh
