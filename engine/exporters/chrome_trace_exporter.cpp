// Chrome Trace Event JSON in Kineto's object layout, which Perfetto UI, chrome://tracing,
// TensorBoard and HTA open. Events are written as they were imported or collected: categories,
// arguments, flow events (ac2g, fwdbwd), process and thread metadata.
#include "engine/exporters/exporter.h"
#include "engine/exporters/json_out.h"

namespace profsh {

namespace {

void WriteIdent(JsonOut& j, const Trace& t, const Ident& id) {
  if (id.is_string) {
    j.String(t.str(id.str));
  } else {
    j.Int(id.number);
  }
}

void WriteValue(JsonOut& j, const Trace& t, const ArgValue& v) {
  switch (v.type) {
    case ArgType::kNull:
      j.Raw("null");
      break;
    case ArgType::kBool:
      j.Raw(v.bool_value ? "true" : "false");
      break;
    case ArgType::kInt:
      j.Int(v.int_value);
      break;
    case ArgType::kUInt:
      j.UInt(static_cast<uint64_t>(v.int_value));
      break;
    case ArgType::kDouble:
      j.Double(v.double_value);
      break;
    case ArgType::kString:
      j.String(t.str(v.str));
      break;
    case ArgType::kJson:
      j.Raw(t.str(v.str));
      break;
  }
}

class ChromeTraceExporter final : public Exporter {
 public:
  std::string_view name() const override { return "chrome"; }

  Status Write(const Trace& t, const ExportOptions&, AtomicWriter& out) const override {
    JsonOut j(out);
    j.Raw("{\n");
    if (t.FindMetadata("schemaVersion") == nullptr) j.Raw("  \"schemaVersion\": 1,\n");
    for (const auto& [key, value] : t.metadata) {
      j.Raw("  ");
      j.String(key);
      j.Raw(": ");
      j.Raw(value);
      j.Raw(",\n");
    }
    if (t.has_origin) {
      j.Raw("  \"baseTimeNanoseconds\": ");
      j.Int(t.origin_ns);
      j.Raw(",\n");
    }
    j.Raw("  \"traceEvents\": [");
    const EventTable& ev = t.events;
    const size_t n = ev.size();
    for (size_t i = 0; i < n; ++i) {
      j.Raw(i == 0 ? "\n  {\"ph\": \"" : ",\n  {\"ph\": \"");
      j.Char(ev.phase(i));
      j.Char('"');
      uint16_t cat = ev.category(i);
      if (cat != 0) {
        j.Raw(", \"cat\": ");
        j.String(t.category_name(cat));
      }
      j.Raw(", \"name\": ");
      j.String(t.str(ev.name(i)));
      const Track& track = t.tracks[ev.track(i)];
      j.Raw(", \"pid\": ");
      WriteIdent(j, t, track.pid);
      j.Raw(", \"tid\": ");
      WriteIdent(j, t, track.tid);
      if (ev.phase(i) != 'M' || ev.ts(i) != 0) {
        j.Raw(", \"ts\": ");
        j.Micros(ev.ts(i));
      }
      if (ev.phase(i) == 'X') {
        j.Raw(", \"dur\": ");
        j.Micros(ev.dur(i));
      }
      ArgRef ref = ev.args(i);
      if (!ref.empty()) {
        auto view = t.args.Get(ref);
        bool has_args = false;
        for (auto item : view) {
          if (!item.top_level) {
            has_args = true;
            continue;
          }
          j.Raw(", ");
          j.String(t.str(item.key));
          j.Raw(": ");
          WriteValue(j, t, item.value);
        }
        if (has_args) {
          j.Raw(", \"args\": {");
          bool first = true;
          for (auto item : view) {
            if (item.top_level) continue;
            if (!first) j.Raw(", ");
            first = false;
            j.String(t.str(item.key));
            j.Raw(": ");
            WriteValue(j, t, item.value);
          }
          j.Char('}');
        }
      }
      j.Char('}');
    }
    j.Raw("\n  ]\n}\n");
    j.Flush();
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Exporter> MakeChromeTraceExporter() {
  return std::make_unique<ChromeTraceExporter>();
}

}  // namespace profsh
