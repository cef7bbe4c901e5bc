// Chrome Trace Event JSON in Kineto's object layout, which Perfetto UI, chrome://tracing,
// TensorBoard and HTA open. Events are written as they were imported or collected: categories,
// arguments, flow events (ac2g, fwdbwd), process and thread metadata.
#include "engine/analysis/gpu_analyses.h"
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

// What an event shares with the other events of its template, as text made once: its head up to
// its times, and per argument schema the arguments with holes where the event's inline values
// go. An event then costs its times and its inline values, not the escaping of its name, keys
// and constant values again.
class EventTexts {
 public:
  struct Args {
    struct Hole {
      uint32_t text_end;  // the text before the hole ends here
      ArgType type;
      uint8_t words;  // 1 or 2
      uint32_t word;  // where the value starts among the event's inline words
    };
    bool built = false;
    std::string text;
    std::vector<Hole> holes;
  };

  explicit EventTexts(const Trace& t)
      : t_(t), heads_(t.events.templates().size()), args_(t.args.schema_count()) {}

  const std::string& Head(uint32_t event_template) {
    std::string& head = heads_[event_template];
    if (head.empty()) BuildHead(event_template, &head);
    return head;
  }
  const Args& ArgsOf(uint32_t schema) {
    Args& args = args_[schema];
    if (!args.built) BuildArgs(schema, &args);
    return args;
  }

 private:
  void BuildHead(uint32_t event_template, std::string* head) const {
    const EventTemplate& tp = t_.events.templates()[event_template];
    JsonOut j(head);
    j.Raw("{\"ph\": \"");
    j.Char(EventTable::PhaseOf(tp.kind));
    j.Char('"');
    const uint16_t cat = EventTable::CategoryOf(tp.kind);
    if (cat != 0) {
      j.Raw(", \"cat\": ");
      j.String(t_.category_name(cat));
    }
    j.Raw(", \"name\": ");
    j.String(t_.str(tp.name));
    const Track& track = t_.tracks[tp.track];
    j.Raw(", \"pid\": ");
    WriteIdent(j, t_, track.pid);
    j.Raw(", \"tid\": ");
    WriteIdent(j, t_, track.tid);
  }

  // Top-level fields first, then the "args" object, each in schema order.
  void BuildArgs(uint32_t schema, Args* args) const {
    const size_t n = t_.args.field_count(schema);
    std::vector<SchemaField> fields(n);
    std::vector<uint32_t> word(n);
    uint32_t words = 0;
    bool has_args = false;
    for (size_t i = 0; i < n; ++i) {
      fields[i] = t_.args.field(schema, i);
      word[i] = words;
      if (fields[i].inline_value) words += fields[i].inline_words;
      has_args |= !fields[i].top_level;
    }
    JsonOut j(&args->text);
    auto value = [&](size_t i) {
      const SchemaField& f = fields[i];
      if (!f.inline_value) {
        WriteValue(j, t_, f.value);
        return;
      }
      j.Flush();
      args->holes.push_back(Args::Hole{static_cast<uint32_t>(args->text.size()), f.value.type,
                                       f.inline_words, word[i]});
    };
    for (size_t i = 0; i < n; ++i) {
      if (!fields[i].top_level) continue;
      j.Raw(", ");
      j.String(t_.str(fields[i].key));
      j.Raw(": ");
      value(i);
    }
    if (has_args) {
      j.Raw(", \"args\": {");
      bool first = true;
      for (size_t i = 0; i < n; ++i) {
        if (fields[i].top_level) continue;
        if (!first) j.Raw(", ");
        first = false;
        j.String(t_.str(fields[i].key));
        j.Raw(": ");
        value(i);
      }
      j.Char('}');
    }
    j.Flush();
    args->built = true;
  }

  const Trace& t_;
  std::vector<std::string> heads_;  // per event template; empty until first needed
  std::vector<Args> args_;          // per argument schema
};

// Queue length and memory bandwidth (engine/analysis/gpu_counters) as counter events ("ph": "C"),
// one track per counter and stream, in the device's process (Kineto's pid for device N is N).
// Returns whether nothing has been written yet (`first` still).
bool WriteCounters(const Trace& t, bool first, JsonOut& j) {
  AnalysisRows series = CounterSeries(BuildGpuEvents(t), t);
  const size_t name = series.Column("name"), device = series.Column("device"),
               stream = series.Column("stream"), ts = series.Column("ts"),
               value = series.Column("value");
  for (size_t r = 0; r < series.rows.size(); ++r) {
    const std::vector<Cell> row = series.rows[r];
    j.Raw(first ? "\n  " : ",\n  ");
    first = false;
    std::string track = row[name].text;
    if (row[stream].kind == Cell::Kind::kInt)
      track += " stream " + std::to_string(row[stream].int_value);
    j.Raw("{\"ph\": \"C\", \"cat\": \"profsh_counter\", \"name\": ");
    j.String(track);
    j.Raw(", \"pid\": ");
    j.Int(row[device].int_value);
    j.Raw(", \"tid\": 0, \"ts\": ");
    j.Int(row[ts].int_value);
    j.Raw(", \"args\": {");
    j.String(row[name].text);
    j.Raw(": ");
    j.Raw(row[value].Format());
    j.Raw("}}");
  }
  return first;
}

void WriteFlows(std::span<const ChromeFlow> flows, bool first, JsonOut& j) {
  int64_t id = 0;
  for (const ChromeFlow& f : flows) {
    for (int end = 0; end < 2; ++end) {
      j.Raw(first ? "\n  " : ",\n  ");
      first = false;
      j.Raw(end == 0 ? "{\"ph\": \"s\", \"id\": " : "{\"ph\": \"f\", \"bp\": \"e\", \"id\": ");
      j.Int(id);
      j.Raw(", \"pid\": ");
      j.Raw(end == 0 ? f.from_pid : f.to_pid);
      j.Raw(", \"tid\": ");
      j.Raw(end == 0 ? f.from_tid : f.to_tid);
      j.Raw(", \"ts\": ");
      j.Micros(end == 0 ? f.from_ts : f.to_ts);
      j.Raw(", \"cat\": ");
      j.String(f.cat);
      j.Raw(", \"name\": ");
      j.String(f.name);
      if (!f.args.empty()) {
        j.Raw(", \"args\": {");
        j.Raw(f.args);
        j.Char('}');
      }
      j.Char('}');
    }
    ++id;
  }
}

class ChromeTraceExporter final : public Exporter {
 public:
  std::string_view name() const override { return "chrome"; }

  Status Write(const Trace& t, const ExportOptions& options, AtomicWriter& out) const override {
    return WriteWithFlows(t, options, {}, out);
  }

  Status WriteWithFlows(const Trace& t, const ExportOptions& options,
                        std::span<const ChromeFlow> flows, AtomicWriter& out) const {
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
    const uint32_t* event_template = ev.template_column().data();
    const uint32_t* args_offset = ev.args_column().data();
    const uint32_t* arena = t.args.arena().data();
    EventTexts texts(t);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t tp = event_template[i];
      j.Raw(i == 0 ? "\n  " : ",\n  ");
      j.Raw(texts.Head(tp));
      const char phase = ev.phase(i);
      if (phase != 'M' || ev.ts(i) != 0) {
        j.Raw(", \"ts\": ");
        j.Micros(ev.ts(i));
      }
      if (phase == 'X') {
        j.Raw(", \"dur\": ");
        j.Micros(ev.dur(i));
      }
      const uint32_t schema_plus_one = ev.templates()[tp].schema_plus_one;
      if (schema_plus_one != 0) {
        const EventTexts::Args& args = texts.ArgsOf(schema_plus_one - 1);
        const std::string_view text = args.text;
        const uint32_t* words = arena + args_offset[i];
        uint32_t at = 0;
        for (const EventTexts::Args::Hole& hole : args.holes) {
          j.Raw(text.substr(at, hole.text_end - at));
          WriteValue(j, t, ArgStore::InlineValue(hole.type, words + hole.word, hole.words));
          at = hole.text_end;
        }
        j.Raw(text.substr(at));
      }
      j.Char('}');
    }
    auto counters = options.find("counters");
    bool first = n == 0;
    if (counters != options.end() && counters->second == "true") first = WriteCounters(t, first, j);
    WriteFlows(flows, first, j);
    j.Raw("\n  ]\n}\n");
    j.Flush();
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Exporter> MakeChromeTraceExporter() {
  return std::make_unique<ChromeTraceExporter>();
}

Status ExportChromeTrace(const Trace& trace, const std::string& path, const ExportOptions& options,
                         std::span<const ChromeFlow> flows) {
  auto writer = AtomicWriter::Create(path);
  if (!writer.ok()) return writer.error();
  Status s = ChromeTraceExporter().WriteWithFlows(trace, options, flows, *writer.value());
  if (!s.ok()) return s;
  return writer.value()->Commit();
}

}  // namespace profsh
