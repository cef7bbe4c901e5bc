#include "engine/analysis/function_events.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "engine/analysis/arg_reader.h"
#include "engine/analysis/event_kind.h"
#include "engine/trace/kineto_schema.h"
#include "engine/util/hash.h"
#include "engine/util/parallel.h"
#include "engine/util/saturating.h"

namespace profsh {

namespace {

enum class CategoryClass : uint8_t { kCpu, kRuntime, kDevice, kDeviceAnnotation, kSkip };

CategoryClass Classify(std::string_view category, EventKind kind) {
  switch (kind) {
    case EventKind::kKernel:
    case EventKind::kCopy:
    case EventKind::kSet:
      return CategoryClass::kDevice;
    case EventKind::kAnnotation:
      // gpu_user_annotation: the device-side span of a user range, listed but not counted.
      return category.size() > 4 && (category[0] | 0x20) == 'g' && (category[1] | 0x20) == 'p' &&
                     (category[2] | 0x20) == 'u' && category[3] == '_'
                 ? CategoryClass::kDeviceAnnotation
                 : CategoryClass::kCpu;
    case EventKind::kRuntime:
      return CategoryClass::kRuntime;
    case EventKind::kOther:
      return CategoryClass::kSkip;
    default:
      return CategoryClass::kCpu;
  }
}

// The bits of FunctionEvents' flags that tell kinds apart within a class.
uint8_t KindBits(EventKind kind) {
  switch (kind) {
    case EventKind::kCopy:
      return FunctionEvents::kCopy;
    case EventKind::kSet:
      return FunctionEvents::kSet;
    case EventKind::kAnnotation:
      return FunctionEvents::kUserRange;
    default:
      return 0;
  }
}

// torch's _filter_name: utility ops that never appear in the tables.
bool IsFilteredName(std::string_view name) {
  return name == kineto::kMemoryEvent || name == kineto::kOutOfMemoryEvent ||
         name == "profiler::_record_function_enter" ||
         name == "profiler::_record_function_enter_new" ||
         name == "profiler::_record_function_exit" || name == "aten::is_leaf" ||
         name == "aten::output_nr" || name == "aten::_version";
}

// torch's _filter_stack_entry.
bool KeepStackFrame(std::string_view frame) {
  static const std::pair<std::string_view, std::string_view> kFiltered[] = {
      {"autograd/__init__", "_make_grads"},
      {"autograd/__init__", "backward"},
      {"torch/tensor", "backward"},
      {"_internal/common_utils", "prof_callable"},
      {"_internal/common_utils", "prof_func_call"},
      {"_internal/common_utils", "prof_meth_call"},
  };
  for (const auto& [a, b] : kFiltered) {
    if (frame.find(a) != std::string_view::npos && frame.find(b) != std::string_view::npos)
      return false;
  }
  return true;
}

// Arguments torch 2.x's Kineto writes on operators and torch 1.13's never did: the record
// function id (2.1), the concrete scalar inputs (2.1) and input strides (2.2). Schema keys are
// few (one per distinct argument layout), so this costs nothing next to reading the events.
TorchFormat DetectTorchFormat(const Trace& trace) {
  static constexpr std::string_view kTorch2Args[] = {
      kineto::kRecordFunctionId, kineto::kConcreteInputs, kineto::kInputStrides};
  for (std::string_view key : kTorch2Args) {
    const auto id = trace.strings.Find(key);
    if (!id) continue;
    for (uint32_t schema = 0; schema < trace.args.schema_count(); ++schema) {
      for (size_t f = 0, n = trace.args.field_count(schema); f < n; ++f) {
        const SchemaField field = trace.args.field(schema, f);
        if (!field.top_level && field.key == *id) return TorchFormat::k2;
      }
    }
  }
  return TorchFormat::k113;
}

bool IsCpuMemoryDevice(int64_t device_type) {
  return device_type == 0 || device_type == 2 || device_type == 5;  // c10: CPU, MKLDNN, IDEEP
}
bool IsCudaMemoryDevice(int64_t device_type) {
  return device_type == 1 || device_type == 6;
}  // CUDA, HIP

// The ids (External ids, correlations) that device work refers to, each mapped to the first
// candidate that carries it. Ids are counters in practice, so a dense array usually does; a hash
// table takes over when they are spread out.
class IdIndex {
 public:
  // `for_each_wanted(f)` calls f(id) for every wanted id; it is called twice.
  template <typename ForEachWanted>
  explicit IdIndex(ForEachWanted for_each_wanted) {
    size_t count = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for_each_wanted([&](int64_t id) {
      ++count;
      lo = std::min(lo, id);
      hi = std::max(hi, id);
    });
    if (count == 0) return;
    // hi - lo, not the count of values in [lo, hi], which wraps to 0 for the whole int64 range.
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    if (span < count * 8 + 4096) {
      dense_ = true;
      min_ = lo;
      dense_values_.assign(span + 1, kNotWanted);
      for_each_wanted([&](int64_t id) { dense_values_[static_cast<uint64_t>(id - lo)] = kUnset; });
      return;
    }
    size_t n = 16;
    while (n < count * 2) n <<= 1;
    keys_.assign(n, kEmpty);
    values_.assign(n, kUnset);
    for_each_wanted([&](int64_t id) { keys_[Slot(id)] = id; });
  }
  // Keeps the earliest candidate offered for a wanted id, as the reference's dicts keep the
  // first; the parts of a parallel loop may offer at the same time.
  void Offer(int64_t id, uint32_t candidate) {
    int32_t* v = Value(id);
    if (v == nullptr) return;
    std::atomic_ref<int32_t> slot(*v);
    const int32_t c = static_cast<int32_t>(candidate);
    int32_t seen = slot.load(std::memory_order_relaxed);
    while ((seen == kUnset || seen > c) &&
           !slot.compare_exchange_weak(seen, c, std::memory_order_relaxed)) {
    }
  }
  int32_t Find(int64_t id) const {
    const int32_t* v = const_cast<IdIndex*>(this)->Value(id);
    return v == nullptr || *v < 0 ? -1 : *v;
  }

 private:
  static constexpr int32_t kUnset = -1, kNotWanted = -2;
  static constexpr int64_t kEmpty = INT64_MIN;
  int32_t* Value(int64_t id) {
    if (dense_) {
      uint64_t off = static_cast<uint64_t>(id) - static_cast<uint64_t>(min_);
      if (off >= dense_values_.size()) return nullptr;
      // Offers may run in parallel; kNotWanted is never written after construction.
      int32_t* v = &dense_values_[off];
      return std::atomic_ref<int32_t>(*v).load(std::memory_order_relaxed) == kNotWanted ? nullptr
                                                                                        : v;
    }
    if (keys_.empty()) return nullptr;
    size_t pos = Slot(id);
    return keys_[pos] == id ? &values_[pos] : nullptr;
  }
  size_t Slot(int64_t key) const {
    size_t mask = keys_.size() - 1;
    size_t pos = HashInt(static_cast<uint64_t>(key)) & mask;
    while (keys_[pos] != kEmpty && keys_[pos] != key) pos = (pos + 1) & mask;
    return pos;
  }
  bool dense_ = false;
  int64_t min_ = 0;
  LargeVector<int32_t> dense_values_;
  LargeVector<int64_t> keys_;
  LargeVector<int32_t> values_;
};

// lower_bound / upper_bound that start from a hint: consecutive queries are usually close, so
// gallop from the last answer instead of searching the whole array.
template <typename T, typename Less>
size_t BoundFrom(const std::vector<T>& v, const T& key, size_t hint, Less less) {
  size_t n = v.size();
  if (hint > n) hint = n;
  size_t lo, hi;
  if (hint < n && less(v[hint], key)) {
    size_t step = 1;
    lo = hint + 1;
    hi = hint + 1;
    while (hi < n && less(v[hi], key)) {
      lo = hi + 1;
      hi = std::min(n, hint + (step <<= 1));
    }
    if (hi > n) hi = n;
  } else {
    size_t step = 1;
    hi = hint;
    lo = hint;
    while (lo > 0 && !less(v[lo - 1], key)) {
      hi = lo - 1;
      lo = hint > (step <<= 1) ? hint - step : 0;
    }
  }
  return static_cast<size_t>(std::partition_point(v.begin() + lo, v.begin() + hi,
                                                  [&](const T& x) { return less(x, key); }) -
                             v.begin());
}

void AppendPythonRepr(std::string_view json, size_t* pos, std::string* out) {
  auto skip_ws = [&] {
    while (*pos < json.size() &&
           (json[*pos] == ' ' || json[*pos] == '\n' || json[*pos] == '\t' || json[*pos] == '\r'))
      ++*pos;
  };
  skip_ws();
  if (*pos >= json.size()) return;
  char c = json[*pos];
  if (c == '[' || c == '{') {
    char close = c == '[' ? ']' : '}';
    out->push_back(c);
    ++*pos;
    bool first = true;
    while (true) {
      skip_ws();
      if (*pos >= json.size()) return;
      if (json[*pos] == close) {
        ++*pos;
        break;
      }
      if (json[*pos] == ',') {
        ++*pos;
        continue;
      }
      if (!first) out->append(", ");
      first = false;
      AppendPythonRepr(json, pos, out);
      skip_ws();
      if (close == '}' && *pos < json.size() && json[*pos] == ':') {
        ++*pos;
        out->append(": ");
        AppendPythonRepr(json, pos, out);
      }
    }
    out->push_back(close);
    return;
  }
  if (c == '"') {
    size_t end = *pos + 1;
    std::string raw;
    while (end < json.size() && json[end] != '"') {
      if (json[end] == '\\' && end + 1 < json.size())
        raw.push_back(json[++end]);
      else
        raw.push_back(json[end]);
      ++end;
    }
    *pos = end + 1;
    out->push_back('\'');
    for (char ch : raw) {
      if (ch == '\'' || ch == '\\') out->push_back('\\');
      out->push_back(ch);
    }
    out->push_back('\'');
    return;
  }
  size_t start = *pos;
  while (*pos < json.size() && json[*pos] != ',' && json[*pos] != ']' && json[*pos] != '}' &&
         json[*pos] != ' ') {
    ++*pos;
  }
  std::string_view token = json.substr(start, *pos - start);
  if (token == "true")
    out->append("True");
  else if (token == "false")
    out->append("False");
  else if (token == "null")
    out->append("None");
  else
    out->append(token);
}

}  // namespace

std::string JsonToPythonRepr(std::string_view json) {
  std::string out;
  size_t pos = 0;
  AppendPythonRepr(json, &pos, &out);
  return out;
}

uint32_t StackTable::Intern(const std::vector<uint32_t>& frames) {
  if (frames.empty()) return 0;
  uint64_t h = HashBytes(reinterpret_cast<const char*>(frames.data()), frames.size() * 4);
  size_t mask = slots_.size() - 1;
  size_t pos = h & mask;
  while (slots_[pos] != 0) {
    if (stacks_[slots_[pos]] == frames) return slots_[pos];
    pos = (pos + 1) & mask;
  }
  uint32_t id = static_cast<uint32_t>(stacks_.size());
  stacks_.push_back(frames);
  slots_[pos] = id;
  if (stacks_.size() * 2 > slots_.size()) Grow();
  return id;
}

void StackTable::Grow() {
  std::vector<uint32_t> bigger(slots_.size() * 2, 0);
  size_t mask = bigger.size() - 1;
  for (uint32_t id = 1; id < stacks_.size(); ++id) {
    const auto& f = stacks_[id];
    size_t pos = HashBytes(reinterpret_cast<const char*>(f.data()), f.size() * 4) & mask;
    while (bigger[pos] != 0) pos = (pos + 1) & mask;
    bigger[pos] = id;
  }
  slots_.swap(bigger);
}

class FunctionEventsBuilder {
 public:
  FunctionEventsBuilder(const Trace& trace, const IttSelection& itt)
      : trace_(trace),
        reader_(trace, {kineto::kExternalId, kineto::kCorrelation, kineto::kInputDims,
                        kineto::kCallStack, kineto::kSequenceNumber, kineto::kBytes,
                        kineto::kDeviceType, kineto::kFlops, "domain"}),
        itt_(itt),
        out_(std::make_unique<FunctionEvents>()),
        f_(*out_) {}

  std::unique_ptr<FunctionEvents> Build();

 private:
  enum Key {
    kExternal,
    kCorrelation,
    kInputDims,
    kCallStack,
    kSequence,
    kBytes,
    kDeviceType,
    kFlops,
    kDomain
  };
  struct MemoryRecord {
    int64_t ts;
    int64_t cpu_bytes, cuda_bytes;
    uint32_t track;
    bool oom;
  };
  struct DeviceLink {
    uint32_t candidate;
    int64_t external, correlation;
    bool has_external, has_correlation;
  };

  void Scan();
  bool IttTaskJoins(uint32_t schema_plus_one);
  void LinkDeviceWork(const IdIndex& op_by_external, const IdIndex& runtime_by_correlation);
  void AttributeMemory();
  void Order();
  void Nest();
  void MarkBackwardFunctions();
  void AttachDeviceWork();
  void MergeLoneSameNameChildren();
  void AssignBackwardStacks();
  void RemoveMergedAndSum();
  void TorchFloatTimes();
  bool AnyDeviceAnnotation() const;
  void AttachDeviceAnnotations();
  int64_t TraceStartNs() const;
  double FloatUs(int64_t ns) const { return static_cast<double>(ns - trace_start_ns_) / 1000.0; }
  int64_t trace_start_ns_ = 0;
  uint32_t NameOf(uint32_t trace_name, bool* filtered);
  // The name as recorded (names_ has ProfilerStep* where the trace has ProfilerStep#N).
  uint32_t RecordedName(uint32_t c) const {
    return c < candidate_events_.size() ? recorded_map_[trace_.events.name(candidate_events_[c])]
                                        : f_.name_[c];
  }
  void ResolveSchemaConstants();
  uint32_t ShapesOf(ArgRef args) const { return args.empty() ? 0 : schema_shapes_[args.schema()]; }
  uint32_t StackOf(ArgRef args) const { return args.empty() ? 0 : schema_stack_[args.schema()]; }
  void AppendLone(const MemoryRecord& r, uint32_t name);

  const Trace& trace_;
  ArgReader reader_;
  IttSelection itt_;  // kAuto resolved in Scan
  std::unique_ptr<FunctionEvents> out_;
  FunctionEvents& f_;  // the columns are built in place, one entry per candidate
  bool want_shapes_ = false, want_stacks_ = false, want_flops_ = false;

  // Per candidate, besides the output columns.
  LargeVector<uint32_t> candidate_events_;  // the trace event (lone memory records have none)
  // Nesting group when it is not the track: runtime calls moved to their op's thread. Empty when
  // none moved.
  LargeVector<uint32_t> thread_;
  LargeVector<int64_t> seq_;  // only with stacks
  std::vector<MemoryRecord> memory_;
  LargeVector<DeviceLink> links_;
  std::vector<int32_t> link_op_;          // candidate: the op named by the link's External id
  std::vector<int32_t> runtime_of_link_;  // candidate: the runtime call with the link's correlation

  // Candidates grouped by thread, (start, -end) within.
  LargeVector<uint32_t> order_;
  std::vector<std::pair<uint32_t, uint32_t>> segments_;  // [begin, end) in order_ per thread
  LargeVector<uint8_t> child_count_;  // saturates at 255; only "exactly one" matters
  LargeVector<int64_t> kernel_ns_;
  LargeVector<double> kernel_us_;  // torch 2.x's float sum of the kernels' durations
  LargeVector<uint8_t> backward_;
  LargeVector<uint8_t> removed_;
  bool any_removed_ = false;

  std::vector<uint32_t> name_map_;  // trace name id -> display name id + 1; 0 unknown
  std::vector<uint32_t> recorded_map_;
  std::vector<uint32_t> schema_shapes_, schema_stack_;  // per argument schema
};

uint32_t FunctionEventsBuilder::NameOf(uint32_t trace_name, bool* filtered) {
  static constexpr uint32_t kFiltered = UINT32_MAX;
  uint32_t& slot = name_map_[trace_name];
  if (slot == 0) {
    std::string_view s = trace_.str(trace_name);
    if (IsFilteredName(s)) {
      slot = kFiltered;
    } else {
      uint32_t recorded = out_->strings.Intern(s);
      recorded_map_[trace_name] = recorded;
      slot =
          (s.starts_with("ProfilerStep#") ? out_->strings.Intern("ProfilerStep*") : recorded) + 1;
    }
  }
  *filtered = slot == kFiltered;
  return slot - 1;
}

// "Input Dims" and "Call stack" are argument-schema constants, so they are resolved once per
// schema, not once per event.
void FunctionEventsBuilder::ResolveSchemaConstants() {
  const uint32_t schemas = trace_.args.schema_count();
  if (want_shapes_) schema_shapes_.assign(schemas, 0);
  if (want_stacks_) schema_stack_.assign(schemas, 0);
  std::unordered_map<uint32_t, uint32_t> shapes_of_json, stack_of_text;
  for (uint32_t schema = 0; schema < schemas; ++schema) {
    ArgValue v;
    if (want_shapes_ && reader_.GetSchemaConstant(schema, kInputDims, &v) &&
        v.type == ArgType::kJson) {
      auto it = shapes_of_json.find(v.str);
      if (it == shapes_of_json.end()) {
        std::string repr = JsonToPythonRepr(trace_.str(v.str));
        it = shapes_of_json.emplace(v.str, repr == "[]" ? 0 : out_->strings.Intern(repr)).first;
      }
      schema_shapes_[schema] = it->second;
    }
    if (want_stacks_ && reader_.GetSchemaConstant(schema, kCallStack, &v) &&
        v.type == ArgType::kString) {
      auto it = stack_of_text.find(v.str);
      if (it == stack_of_text.end()) {
        std::vector<uint32_t> frames;
        std::string_view text = trace_.str(v.str);
        size_t start = 0;
        while (!text.empty()) {
          size_t semi = text.find(';', start);
          std::string_view frame = text.substr(
              start, semi == std::string_view::npos ? std::string_view::npos : semi - start);
          if (KeepStackFrame(frame)) frames.push_back(out_->strings.Intern(frame));
          if (semi == std::string_view::npos) break;
          start = semi + 1;
        }
        it = stack_of_text.emplace(v.str, out_->stacks.Intern(frames)).first;
      }
      schema_stack_[schema] = it->second;
    }
  }
}

// Whether the ITT tasks of a template (one domain: the domain is an argument of the schema)
// join the operator view; notes the domains left out.
bool FunctionEventsBuilder::IttTaskJoins(uint32_t schema_plus_one) {
  std::string domain;
  ArgValue v;
  if (schema_plus_one != 0 && reader_.GetSchemaConstant(schema_plus_one - 1, kDomain, &v) &&
      v.type == ArgType::kString)
    domain = trace_.str(v.str);
  const bool joins =
      itt_.mode == IttSelection::Mode::kAll ||
      (itt_.mode == IttSelection::Mode::kDomains &&
       std::find(itt_.domains.begin(), itt_.domains.end(), domain) != itt_.domains.end());
  if (!joins) f_.itt_domains_left_out.push_back(std::move(domain));
  return joins;
}

void FunctionEventsBuilder::Scan() {
  const EventTable& ev = trace_.events;
  const size_t n = ev.size();
  std::vector<CategoryClass> category_class(trace_.categories.size());
  std::vector<uint8_t> kind_bits(trace_.categories.size());
  std::vector<uint8_t> itt_category(trace_.categories.size(), 0);
  bool has_operators = false;
  for (size_t c = 0; c < trace_.categories.size(); ++c) {
    const std::string_view name = trace_.category_name(static_cast<uint16_t>(c));
    itt_category[c] = name == "itt";
    has_operators |= name == kineto::kCpuOp;
    const EventKind kind = KindOfCategory(name);
    category_class[c] = Classify(name, kind);
    kind_bits[c] = KindBits(kind);
    // The device the table's columns are named after, as torch 2.x names them.
    if (name == "mtia_ccp_events" || name == "mtia_runtime") f_.device_name = "MTIA";
    if (name == "xpu_runtime" || name == "xpu_driver") f_.device_name = "XPU";
    if (name == "privateuse1_runtime" || name == "privateuse1_driver")
      f_.device_name = "PRIVATEUSE1";
  }
  if (itt_.mode == IttSelection::Mode::kAuto && !has_operators)
    itt_.mode = IttSelection::Mode::kAll;
  if (itt_.mode == IttSelection::Mode::kAuto) itt_ = {IttSelection::Mode::kDomains, {"PyTorch"}};
  f_.torch_format = DetectTorchFormat(trace_);
  if (f_.torch_format == TorchFormat::k2) trace_start_ns_ = TraceStartNs();
  name_map_.assign(trace_.strings.size(), 0);
  recorded_map_.assign(trace_.strings.size(), 0);
  const auto memory_name = trace_.strings.Find(kineto::kMemoryEvent);
  const auto oom_name = trace_.strings.Find(kineto::kOutOfMemoryEvent);
  want_shapes_ = trace_.strings.Find(kineto::kInputDims).has_value();
  want_stacks_ = trace_.strings.Find(kineto::kCallStack).has_value();
  want_flops_ = trace_.strings.Find(kineto::kFlops).has_value();
  ResolveSchemaConstants();

  // What each event template is to the operator view, decided once per template: events of a
  // template share their name, track, category and argument schema.
  enum Role : uint8_t { kIgnored, kOperator, kMemoryRecord, kOutOfMemory };
  struct TemplateInfo {
    Role role = kIgnored;
    uint8_t flags = 0;
    uint32_t name = 0;  // display name
    uint32_t track = 0;
    bool has_args = false;
    uint32_t shapes = 0, stack = 0;
    struct Id {
      uint32_t word = 0, words = 0;  // words == 0: not inline, read it the slow way
    };
    Id own_id;       // an op's External id, a runtime call's or device event's correlation
    Id correlation;  // device work: its correlation (own_id is then its External id)
    // A kernel, copy or set (not a GPU-side annotation): what is linked to its launcher.
    bool IsDeviceWork() const {
      return (flags & (FunctionEvents::kDevice | FunctionEvents::kAnnotation)) ==
             FunctionEvents::kDevice;
    }
  };
  const auto& templates = ev.templates();
  std::vector<TemplateInfo> info(templates.size());
  std::vector<uint8_t> itt_left_out(templates.size(), 0);
  bool any_itt_left_out = false;
  for (size_t t = 0; t < templates.size(); ++t) {
    const EventTemplate& tp = templates[t];
    TemplateInfo& ti = info[t];
    char ph = EventTable::PhaseOf(tp.kind);
    if (ph == 'X') {
      const auto category = EventTable::CategoryOf(tp.kind);
      CategoryClass cls = category_class[category];
      if (cls == CategoryClass::kSkip) continue;
      if (itt_category[category] && !IttTaskJoins(tp.schema_plus_one)) {
        itt_left_out[t] = 1;
        any_itt_left_out = true;
        continue;
      }
      bool filtered;
      ti.name = NameOf(tp.name, &filtered);
      if (filtered) continue;
      ti.role = kOperator;
      ti.track = tp.track;
      ti.has_args = tp.schema_plus_one != 0;
      ti.flags = cls == CategoryClass::kDevice ? FunctionEvents::kDevice
                 : cls == CategoryClass::kDeviceAnnotation
                     ? FunctionEvents::kDevice | FunctionEvents::kAnnotation
                 : cls == CategoryClass::kRuntime ? FunctionEvents::kRuntime
                                                  : 0;
      ti.flags |= kind_bits[category];
      ArgRef schema_only{tp.schema_plus_one, 0};
      if (!(ti.flags & FunctionEvents::kDevice)) {
        if (want_shapes_) ti.shapes = ShapesOf(schema_only);
        if (want_stacks_) ti.stack = StackOf(schema_only);
      }
    } else if (ph == 'i' || ph == 'I') {
      if (memory_name && tp.name == *memory_name) ti.role = kMemoryRecord;
      if (oom_name && tp.name == *oom_name) ti.role = kOutOfMemory;
    }
  }

  // The ids that link device work to its op or runtime call: read straight from the event's
  // inline words when the template's schema keeps them there (always, in Kineto traces).
  struct IdRead {
    const ArgReader* reader;
    const uint32_t* arena;
    int64_t operator()(const TemplateInfo::Id& id, ArgRef args, size_t key, bool* found) const {
      if (id.words == 1) {
        *found = true;
        return static_cast<int32_t>(arena[args.offset + id.word]);
      }
      if (id.words == 2) {
        *found = true;
        return static_cast<int64_t>(arena[args.offset + id.word] |
                                    static_cast<uint64_t>(arena[args.offset + id.word + 1]) << 32);
      }
      int64_t v = 0;
      *found = reader->GetInt(args, key, &v);
      return v;
    }
  };
  const IdRead read_id{&reader_, trace_.args.arena().data()};
  for (size_t t = 0; t < templates.size(); ++t) {
    TemplateInfo& ti = info[t];
    if (ti.role != kOperator || templates[t].schema_plus_one == 0) continue;
    const uint32_t schema = templates[t].schema_plus_one - 1;
    auto slot = [&](size_t key, TemplateInfo::Id* id) {
      if (!reader_.InlineIntSlot(schema, key, &id->word, &id->words)) id->words = 0;
    };
    slot(ti.flags & FunctionEvents::kRuntime ? kCorrelation : kExternal, &ti.own_id);
    if (ti.IsDeviceWork()) slot(kCorrelation, &ti.correlation);
  }

  // First pass, over the template column: how many ops, and the device work with its ids. One
  // byte per template keeps the loop in the first-level cache: bit 0 an op, bit 1 device work,
  // bit 2 a memory record.
  std::vector<uint8_t> kind(templates.size(), 0);
  for (size_t t = 0; t < templates.size(); ++t) {
    const TemplateInfo& ti = info[t];
    kind[t] = ti.role == kOperator ? (ti.IsDeviceWork() ? 3 : 1) : ti.role == kIgnored ? 0 : 4;
  }
  const uint32_t* event_template = ev.template_column().data();
  if (any_itt_left_out) {
    for (size_t i = 0; i < n; ++i) f_.itt_tasks_left_out += itt_left_out[event_template[i]];
    std::sort(f_.itt_domains_left_out.begin(), f_.itt_domains_left_out.end());
    f_.itt_domains_left_out.erase(
        std::unique(f_.itt_domains_left_out.begin(), f_.itt_domains_left_out.end()),
        f_.itt_domains_left_out.end());
  }
  const size_t parts = PartsFor(n);
  // Each part counts its ops and records and lists its device work with part-local op
  // numbers; the offsets of the parts then make them global.
  std::vector<size_t> first_op(parts + 1, 0), first_record(parts + 1, 0);
  std::vector<LargeVector<DeviceLink>> part_links(parts);
  RunInParts(parts, [&](size_t part) {
    size_t ops = 0, records = 0;
    for (size_t i = PartBegin(n, part, parts), end = PartEnd(n, part, parts); i < end; ++i) {
      const uint8_t k = kind[event_template[i]];
      if (k == 3) {
        const TemplateInfo& ti = info[event_template[i]];
        DeviceLink d{static_cast<uint32_t>(ops), -1, -1, false, false};
        const ArgRef args = ev.args(i);
        if (!args.empty()) {
          d.external = read_id(ti.own_id, args, kExternal, &d.has_external);
          d.correlation = read_id(ti.correlation, args, kCorrelation, &d.has_correlation);
        }
        part_links[part].push_back(d);
      }
      ops += k & 1;
      records += k >> 2;
    }
    first_op[part + 1] = ops;
    first_record[part + 1] = records;
  });
  std::vector<size_t> first_link(parts + 1, 0);
  for (size_t p = 0; p < parts; ++p) {
    first_op[p + 1] += first_op[p];
    first_record[p + 1] += first_record[p];
    first_link[p + 1] = first_link[p] + part_links[p].size();
  }
  links_.resize(first_link[parts]);
  RunInParts(parts, [&](size_t part) {
    DeviceLink* out = links_.data() + first_link[part];
    const uint32_t op_offset = static_cast<uint32_t>(first_op[part]);
    for (DeviceLink d : part_links[part]) {
      d.candidate += op_offset;
      *out++ = d;
    }
    LargeVector<DeviceLink>().swap(part_links[part]);
  });
  const size_t m = first_op[parts], memory = first_record[parts];
  IdIndex op_by_external([&](auto&& f) {
    for (const DeviceLink& d : links_) {
      if (d.has_external) f(d.external);
    }
  });
  IdIndex runtime_by_correlation([&](auto&& f) {
    for (const DeviceLink& d : links_) {
      if (d.has_correlation) f(d.correlation);
    }
  });
  const bool linking = !links_.empty();

  candidate_events_.resize(m);
  f_.flags_.resize(m);
  f_.start_.resize(m);
  f_.end_.resize(m);
  f_.name_.resize(m);
  f_.track_.resize(m);
  if (want_shapes_) f_.shapes_.resize(m);
  if (want_stacks_) {
    f_.stack_.resize(m);
    seq_.assign(m, -1);
  }
  if (want_flops_) f_.flops_.assign(m, 0);
  memory_.resize(memory);

  // Second pass: the columns, and each op or runtime call offered to the index under its id.
  // Its parts write disjoint ranges of every column.
  const int64_t* ts = ev.ts_column().data();
  const uint32_t* dur = ev.dur_column().data();
  // Raw column pointers: through the vectors, every store would make the compiler load each
  // vector's data pointer again.
  uint32_t* candidate_event = candidate_events_.data();
  uint8_t* flags = f_.flags_.data();
  int64_t* start = f_.start_.data();
  int64_t* finish = f_.end_.data();
  uint32_t* name = f_.name_.data();
  uint32_t* track = f_.track_.data();
  uint32_t* shapes = want_shapes_ ? f_.shapes_.data() : nullptr;
  uint32_t* stack = want_stacks_ ? f_.stack_.data() : nullptr;
  RunInParts(parts, [&](size_t part) {
    size_t c = first_op[part], r = first_record[part];
    for (size_t i = PartBegin(n, part, parts), end = PartEnd(n, part, parts); i < end; ++i) {
      const uint32_t t = event_template[i];
      const TemplateInfo& ti = info[t];
      if (ti.role == kIgnored) continue;
      if (ti.role != kOperator) {
        int64_t bytes = 0, device_type = 0;
        reader_.GetInt(ev.args(i), kBytes, &bytes);
        reader_.GetInt(ev.args(i), kDeviceType, &device_type);
        memory_[r++] = {ts[i], IsCpuMemoryDevice(device_type) ? bytes : 0,
                        IsCudaMemoryDevice(device_type) ? bytes : 0, templates[t].track,
                        ti.role == kOutOfMemory};
        continue;
      }
      candidate_event[c] = static_cast<uint32_t>(i);
      flags[c] = ti.flags;
      start[c] = ts[i];
      finish[c] = ts[i] + (dur[i] != EventTable::kLongDuration ? dur[i] : ev.dur(i));
      name[c] = ti.name;
      track[c] = ti.track;
      if (shapes != nullptr) shapes[c] = ti.shapes;
      if (stack != nullptr) stack[c] = ti.stack;
      if (!(ti.flags & FunctionEvents::kDevice) && ti.has_args) {
        const ArgRef args = ev.args(i);
        if (linking) {
          bool found;
          if (ti.flags & FunctionEvents::kRuntime) {
            int64_t id = read_id(ti.own_id, args, kCorrelation, &found);
            if (found) runtime_by_correlation.Offer(id, static_cast<uint32_t>(c));
          } else {
            int64_t id = read_id(ti.own_id, args, kExternal, &found);
            if (found) op_by_external.Offer(id, static_cast<uint32_t>(c));
          }
        }
        if (want_stacks_) reader_.GetInt(args, kSequence, &seq_[c]);
        if (want_flops_) reader_.GetInt(args, kFlops, &f_.flops_[c]);
      }
      ++c;
    }
  });
  for (const MemoryRecord& r : memory_) f_.memory_records += !r.oom;
  if (linking) LinkDeviceWork(op_by_external, runtime_by_correlation);
}

// Newer Kineto (External id != correlation): the device work names its op; the runtime call
// moves to that op's thread, as torch's _parse_kineto_results does. Older Kineto: the runtime call
// with the same correlation, whose parent (known once nested) is the op.
void FunctionEventsBuilder::LinkDeviceWork(const IdIndex& op_by_external,
                                           const IdIndex& runtime_by_correlation) {
  link_op_.assign(links_.size(), -1);
  runtime_of_link_.assign(links_.size(), -1);
  // The lookups are independent and go to random places: they run in parts. Moving runtime
  // calls to their op's thread writes shared state, so it comes after, in one pass.
  const size_t parts = PartsFor(links_.size());
  RunInParts(parts, [&](size_t part) {
    for (size_t k = PartBegin(links_.size(), part, parts),
                end = PartEnd(links_.size(), part, parts);
         k < end; ++k) {
      const DeviceLink& d = links_[k];
      if (d.has_correlation) runtime_of_link_[k] = runtime_by_correlation.Find(d.correlation);
      if (d.has_external && (!d.has_correlation || d.external != d.correlation)) {
        link_op_[k] = op_by_external.Find(d.external);
      }
    }
  });
  for (size_t k = 0; k < links_.size(); ++k) {
    const int32_t op = link_op_[k], runtime = runtime_of_link_[k];
    if (op < 0 || runtime < 0) continue;
    const LargeVector<uint32_t>& thread = thread_.empty() ? f_.track_ : thread_;
    if (thread[runtime] != thread[op]) {
      if (thread_.empty()) thread_ = f_.track_;
      thread_[runtime] = thread_[op];
    }
  }
}

void FunctionEventsBuilder::AppendLone(const MemoryRecord& r, uint32_t name) {
  f_.start_.push_back(r.ts);
  f_.end_.push_back(r.ts);
  f_.name_.push_back(name);
  f_.flags_.push_back(FunctionEvents::kLoneMemory);
  if (!thread_.empty()) thread_.push_back(r.track);
  f_.track_.push_back(r.track);
  if (want_shapes_) f_.shapes_.push_back(0);
  if (want_stacks_) {
    f_.stack_.push_back(0);
    seq_.push_back(-1);
  }
  if (want_flops_) f_.flops_.push_back(0);
  f_.cpu_memory_.push_back(r.cpu_bytes);
  if (!f_.cuda_memory_.empty() || r.cuda_bytes != 0) f_.cuda_memory_.push_back(r.cuda_bytes);
}

// Which op a memory record counts for. Memory profsh's collector recorded knows its thread: it
// counts for every op of that thread open at the time, so the innermost one's self memory has
// it. Records without such an op (a worker thread allocating for the main thread's op), and all
// of torch's records, follow torch: every CPU op of the process whose [start, end] holds the
// record's time counts it. torch 1.13 compares those times in whole microseconds, and so does
// profsh on 1.13's traces; torch 2.x compares nanoseconds, and so does profsh on 2.x's traces
// and on its own. Records no op covers
// become rows of their own, after all trace events.
namespace {
inline int64_t FloorUs(int64_t ns) {
  return ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);
}

// Python's int / 1000: the exact quotient rounded once to a double (ties to even). Converting
// the integer to a double first would round it twice, and times since the epoch (about 2^60 ns)
// have no exact double.
double PythonDivide1000(int64_t a) {
  if (a < 0) return -PythonDivide1000(-a);
  const int64_t q = a / 1000, r = a % 1000;
  if (q >= (int64_t{1} << 53)) return static_cast<double>(q);  // r cannot show at that size
  int bits = 0;                                                // the binary digits q needs
  while (bits < 63 && (q >> bits) != 0) ++bits;
  const int m = 53 - bits;  // fractional binary digits a double keeps next to q
  // r / 1000 in units of 2^-m: k whole units and a remainder `rem` out of 1000.
  const __int128 scaled = static_cast<__int128>(r) << m;
  __int128 mantissa = (static_cast<__int128>(q) << m) + scaled / 1000;
  const int64_t rem = static_cast<int64_t>(scaled % 1000);
  if (rem > 500 || (rem == 500 && (mantissa & 1))) ++mantissa;
  return std::ldexp(static_cast<double>(mantissa), -m);  // mantissa < 2^54: exact
}
}  // namespace

void FunctionEventsBuilder::AttributeMemory() {
  if (memory_.empty()) return;
  std::vector<uint32_t> pid_of_track(trace_.tracks.size());
  {
    std::unordered_map<int64_t, uint32_t> numeric;
    std::unordered_map<uint32_t, uint32_t> named;
    for (uint32_t t = 0; t < trace_.tracks.size(); ++t) {
      const Ident& pid = trace_.tracks[t].pid;
      uint32_t next = static_cast<uint32_t>(numeric.size() + named.size());
      pid_of_track[t] = pid.is_string ? named.emplace(pid.str, next).first->second
                                      : numeric.emplace(pid.number, next).first->second;
    }
  }
  const size_t m = f_.start_.size();
  bool any_cuda = false;
  for (const MemoryRecord& r : memory_) any_cuda |= r.cuda_bytes != 0;
  f_.cpu_memory_.assign(m, 0);
  if (any_cuda) f_.cuda_memory_.assign(m, 0);
  std::vector<bool> used(memory_.size(), false);

  struct Key {
    uint32_t group;  // the track (by thread) or the process (by time)
    int64_t ts;
    bool operator<(const Key& o) const { return group != o.group ? group < o.group : ts < o.ts; }
  };
  // One matching pass over the records not used yet: each op adds the records keyed within its
  // [start, end] in its group; records some op covered are used.
  // torch 2.x compares in nanoseconds (MemRecordsAcc on start_ns), 1.13 in whole microseconds.
  const bool exact = trace_.memory_by_thread || f_.torch_format == TorchFormat::k2;
  // torch 2.x's bounds go through floats: it looks records up between start_ns() / 1000 * 1000
  // and end_ns() / 1000 * 1000 computed in doubles, on times since the epoch (the trace's time
  // plus baseTimeNanoseconds), where a double's step is 256 ns. So an op's bounds move by up to
  // 128 ns and records near its edges fall out or in; records' own times stay exact integers.
  const bool float_bounds = f_.torch_format == TorchFormat::k2 && !trace_.memory_by_thread;
  const int64_t epoch = trace_.has_origin ? trace_.origin_ns : 0;
  auto OpBound = [&](int64_t ns, bool lower) -> int64_t {
    if (!float_bounds) return ns;
    const double bound = PythonDivide1000(ns + epoch) * 1000.0;
    return static_cast<int64_t>(lower ? std::ceil(bound) : std::floor(bound)) - epoch;
  };
  auto match = [&](bool by_thread) {
    std::vector<uint32_t> order;
    for (uint32_t k = 0; k < memory_.size(); ++k) {
      if (!memory_[k].oom && !used[k]) order.push_back(k);
    }
    if (order.empty()) return;
    auto key_of = [&](uint32_t track, int64_t ts) {
      return Key{by_thread ? track : pid_of_track[track], exact ? ts : FloorUs(ts)};
    };
    std::vector<Key> keys(order.size());
    for (size_t k = 0; k < order.size(); ++k)
      keys[k] = key_of(memory_[order[k]].track, memory_[order[k]].ts);
    std::vector<uint32_t> by_key(order.size());
    for (uint32_t k = 0; k < by_key.size(); ++k) by_key[k] = k;
    // Records come in time order per thread, so usually already sorted.
    if (!std::is_sorted(keys.begin(), keys.end()))
      std::stable_sort(by_key.begin(), by_key.end(),
                       [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
    std::vector<Key> sorted(order.size());
    // Prefix sums in unsigned (wrapping) arithmetic: a range's sum is a difference of two, exact
    // whenever the range's own sum fits, even where hostile sizes carry the prefixes past int64.
    std::vector<uint64_t> cpu_prefix(order.size() + 1, 0), cuda_prefix(order.size() + 1, 0);
    for (size_t k = 0; k < by_key.size(); ++k) {
      const MemoryRecord& r = memory_[order[by_key[k]]];
      sorted[k] = keys[by_key[k]];
      cpu_prefix[k + 1] = cpu_prefix[k] + static_cast<uint64_t>(r.cpu_bytes);
      cuda_prefix[k + 1] = cuda_prefix[k] + static_cast<uint64_t>(r.cuda_bytes);
    }
    auto range_sum = [](const std::vector<uint64_t>& prefix, size_t a, size_t b) {
      return static_cast<int64_t>(prefix[b] - prefix[a]);
    };
    auto less = [](const Key& x, const Key& y) { return x < y; };
    auto less_equal = [](const Key& x, const Key& y) { return !(y < x); };
    // Which records some op covers: +1 where a covered range starts, -1 after it ends. The ops
    // are split in parts, each with its own marks.
    const size_t parts = PartsFor(m);
    std::vector<std::vector<int32_t>> marks(parts, std::vector<int32_t>(order.size() + 1, 0));
    RunInParts(parts, [&](size_t part) {
      std::vector<int32_t>& mark = marks[part];
      size_t hint_a = 0, hint_b = 0;
      for (size_t c = PartBegin(m, part, parts), end = PartEnd(m, part, parts); c < end; ++c) {
        if (f_.flags_[c] & FunctionEvents::kDevice) continue;
        const uint32_t track = f_.track_[c];
        size_t a = hint_a =
            BoundFrom(sorted, key_of(track, OpBound(f_.start_[c], true)), hint_a, less);
        const Key end_key = key_of(track, OpBound(f_.end_[c], false));
        // Most ops hold no record: the first record at or after the start already lies beyond
        // the end.
        if (a == sorted.size() || !less_equal(sorted[a], end_key)) continue;
        size_t b = hint_b = BoundFrom(sorted, end_key, hint_b, less_equal);
        f_.cpu_memory_[c] = SaturatingAdd(f_.cpu_memory_[c], range_sum(cpu_prefix, a, b));
        if (any_cuda)
          f_.cuda_memory_[c] = SaturatingAdd(f_.cuda_memory_[c], range_sum(cuda_prefix, a, b));
        mark[a] += 1;
        mark[b] -= 1;
      }
    });
    int32_t running = 0;
    for (size_t k = 0; k < by_key.size(); ++k) {
      for (const auto& mark : marks) running += mark[k];
      if (running > 0) used[order[by_key[k]]] = true;
    }
  };
  if (trace_.memory_by_thread) match(true);
  match(false);

  const uint32_t memory_row = out_->strings.Intern(kineto::kMemoryEvent);
  const uint32_t oom_row = out_->strings.Intern(kineto::kOutOfMemoryEvent);
  for (uint32_t k = 0; k < memory_.size(); ++k) {
    if (!memory_[k].oom && !used[k]) AppendLone(memory_[k], memory_row);
  }
  for (const MemoryRecord& r : memory_) {
    if (r.oom) AppendLone(r, oom_row);
  }
}

void FunctionEventsBuilder::Order() {
  const size_t n = f_.start_.size();
  uint32_t threads = 0;
  // Device work takes no part in nesting, merging or summing: only CPU events are ordered.
  const LargeVector<uint32_t>& thread = thread_.empty() ? f_.track_ : thread_;
  const uint8_t* flags = f_.flags_.data();
  for (uint32_t t : thread) threads = std::max(threads, t + 1);
  std::vector<uint32_t> offset(threads + 1, 0);
  for (size_t c = 0; c < n; ++c) offset[thread[c] + 1] += !(flags[c] & FunctionEvents::kDevice);
  for (uint32_t t = 0; t < threads; ++t) offset[t + 1] += offset[t];
  segments_.clear();
  for (uint32_t t = 0; t < threads; ++t) {
    if (offset[t + 1] > offset[t]) segments_.emplace_back(offset[t], offset[t + 1]);
  }
  order_.resize(offset[threads]);
  for (uint32_t c = 0; c < n; ++c) {
    if (!(flags[c] & FunctionEvents::kDevice)) order_[offset[thread[c]]++] = c;
  }
  // Within a thread: (start, -end), ties in candidate (torch's input) order.
  const int64_t* start = f_.start_.data();
  const int64_t* end = f_.end_.data();
  auto before = [&](uint32_t a, uint32_t b) {
    if (start[a] != start[b]) return start[a] < start[b];
    if (end[a] != end[b]) return end[a] > end[b];
    return a < b;
  };
  // Traces are nearly in order (a range is often written after the ranges it contains): set the
  // few events that break the order aside, keep the rest in place, sort the few and merge them
  // back from the end.
  std::vector<uint32_t> outliers;
  for (auto [b, e] : segments_) {
    uint32_t* seg = order_.data();
    if (std::is_sorted(seg + b, seg + e, before)) continue;
    outliers.clear();
    size_t kept_end = b;
    for (size_t k = b; k < e; ++k) {
      uint32_t x = seg[k];
      if (kept_end == b || !before(x, seg[kept_end - 1])) {
        seg[kept_end++] = x;
      } else {
        outliers.push_back(x);
      }
    }
    if (outliers.size() * 8 > static_cast<size_t>(e - b)) {
      std::copy(outliers.begin(), outliers.end(), seg + kept_end);
      std::sort(seg + b, seg + e, before);
      continue;
    }
    std::sort(outliers.begin(), outliers.end(), before);
    // Backward merge: the free slots are at the end, so nothing is overwritten before it moves.
    size_t k = kept_end, o = outliers.size(), w = e;
    while (o > 0) {
      if (k > b && before(outliers[o - 1], seg[k - 1])) {
        seg[--w] = seg[--k];
      } else {
        seg[--w] = outliers[--o];
      }
    }
  }
}

// torch's _populate_cpu_children: a parent is the innermost earlier range containing [s, e).
void FunctionEventsBuilder::Nest() {
  const size_t n = f_.start_.size();
  f_.parent_.assign(n, -1);
  child_count_.assign(n, 0);
  // Raw pointers: a byte store would make the compiler load each vector's data pointer again.
  const int64_t* start = f_.start_.data();
  const int64_t* end = f_.end_.data();
  const uint32_t* order = order_.data();
  int32_t* parent = f_.parent_.data();
  uint8_t* child_count = child_count_.data();
  std::vector<uint32_t> open;
  for (auto [b, e] : segments_) {
    open.clear();
    for (uint32_t k = b; k < e; ++k) {
      uint32_t c = order[k];  // CPU events only
      while (!open.empty()) {
        uint32_t p = open.back();
        if (start[c] >= end[p] || end[c] > end[p]) {
          open.pop_back();
        } else {
          parent[c] = static_cast<int32_t>(p);
          if (child_count[p] < 255) child_count[p] += 1;
          break;
        }
      }
      open.push_back(c);
    }
  }
}

// Backward functions (torch's RecordScope::BACKWARD_FUNCTION, which traces do not record): the
// autograd node X that a "autograd::engine::evaluate_function: X" range wraps on the same
// thread. Microsecond rounding can make the node stick out of its wrapper, so the test is that
// the node starts within the latest such wrapper, not that it nests inside it.
void FunctionEventsBuilder::MarkBackwardFunctions() {
  backward_.assign(f_.start_.size(), 0);
  static constexpr std::string_view kPrefix = "autograd::engine::evaluate_function: ";
  std::vector<uint32_t> node_of(out_->strings.size(), UINT32_MAX);  // wrapper's name -> node's name
  bool any = false;
  for (uint32_t s = 0; s < out_->strings.size(); ++s) {
    std::string_view name = out_->strings.Get(s);
    if (!name.starts_with(kPrefix)) continue;
    auto node = out_->strings.Find(name.substr(kPrefix.size()));
    if (node) {
      node_of[s] = *node;
      any = true;
    }
  }
  if (!any) return;
  std::unordered_map<uint32_t, int64_t>
      latest_wrapper_end;  // node name -> end of its latest wrapper
  for (auto [b, e] : segments_) {
    latest_wrapper_end.clear();
    for (uint32_t k = b; k < e; ++k) {
      uint32_t c = order_[k];
      if (f_.flags_[c] & FunctionEvents::kDevice) continue;
      uint32_t recorded = RecordedName(c);
      if (node_of[recorded] != UINT32_MAX) latest_wrapper_end[node_of[recorded]] = f_.end_[c];
      auto it = latest_wrapper_end.find(recorded);
      if (it != latest_wrapper_end.end() && f_.start_[c] <= it->second) backward_[c] = 1;
      // A node sorted just before its wrapper (same start, longer through rounding).
      if (!backward_[c] && k + 1 < e) {
        uint32_t next = order_[k + 1];
        if (node_of[RecordedName(next)] == recorded && f_.start_[next] == f_.start_[c])
          backward_[c] = 1;
      }
    }
  }
}

void FunctionEventsBuilder::AttachDeviceWork() {
  const bool annotations = AnyDeviceAnnotation();
  if (links_.empty() && !annotations) return;
  kernel_ns_.assign(f_.start_.size(), 0);
  if (f_.torch_format == TorchFormat::k2) kernel_us_.assign(f_.start_.size(), 0.0);
  f_.launches.resize(links_.size());
  for (size_t k = 0; k < links_.size(); ++k) {
    int32_t op = link_op_[k];
    if (op < 0 && runtime_of_link_[k] >= 0) op = f_.parent_[runtime_of_link_[k]];
    uint32_t device = links_[k].candidate;
    f_.launches[k] = {device, op, runtime_of_link_[k]};
    if (op < 0) continue;
    kernel_ns_[op] += f_.end_[device] - f_.start_[device];
    if (!kernel_us_.empty())
      kernel_us_[op] += FloatUs(f_.end_[device]) - FloatUs(f_.start_[device]);
  }
  if (annotations) AttachDeviceAnnotations();
}

bool FunctionEventsBuilder::AnyDeviceAnnotation() const {
  for (uint8_t flags : f_.flags_) {
    if ((flags & FunctionEvents::kDevice) && (flags & FunctionEvents::kAnnotation)) return true;
  }
  return false;
}

// torch (1.13 and 2.x) attaches every CUDA-typed event linked to an op as one of its kernels,
// and a gpu_user_annotation span is linked (its "External id") to the CPU range it mirrors: the
// span's length counts in that range's device time, on top of the kernels inside it. So a range
// around an op whose kernels the span covers (record_param_comms around nccl:all_reduce) counts
// that device time twice, in torch as here; ProfilerStep* shows its step's GPU span as self
// device time, over 100 %.
void FunctionEventsBuilder::AttachDeviceAnnotations() {
  std::unordered_map<int64_t, int32_t> op_of_external;
  for (size_t c = 0; c < f_.start_.size(); ++c) {
    if (!((f_.flags_[c] & FunctionEvents::kDevice) && (f_.flags_[c] & FunctionEvents::kAnnotation)))
      continue;
    int64_t id = 0;
    if (reader_.GetInt(trace_.events.args(candidate_events_[c]), kExternal, &id))
      op_of_external.emplace(id, -1);
  }
  for (size_t c = 0; c < candidate_events_.size(); ++c) {
    if (f_.flags_[c] & (FunctionEvents::kDevice | FunctionEvents::kRuntime)) continue;
    int64_t id = 0;
    if (!reader_.GetInt(trace_.events.args(candidate_events_[c]), kExternal, &id)) continue;
    auto it = op_of_external.find(id);
    if (it != op_of_external.end() && it->second < 0) it->second = static_cast<int32_t>(c);
  }
  for (size_t c = 0; c < f_.start_.size(); ++c) {
    if (!((f_.flags_[c] & FunctionEvents::kDevice) && (f_.flags_[c] & FunctionEvents::kAnnotation)))
      continue;
    int64_t id = 0;
    if (!reader_.GetInt(trace_.events.args(candidate_events_[c]), kExternal, &id)) continue;
    const int32_t op = op_of_external[id];
    if (op < 0) continue;
    kernel_ns_[op] += f_.end_[c] - f_.start_[c];
    if (!kernel_us_.empty()) kernel_us_[op] += FloatUs(f_.end_[c]) - FloatUs(f_.start_[c]);
  }
}

// torch's _remove_dup_nodes: a lone child with its parent's name merges into the parent, which
// takes over its children and kernels. A removed event's children find their new parent by
// following removed links, as torch's re-parenting within the same pass does.
void FunctionEventsBuilder::MergeLoneSameNameChildren() {
  removed_.assign(f_.start_.size(), 0);
  int32_t* parent = f_.parent_.data();
  uint8_t* removed = removed_.data();
  uint8_t* child_count = child_count_.data();
  const uint32_t* name = f_.name_.data();
  int64_t* kernel_ns = kernel_ns_.empty() ? nullptr : kernel_ns_.data();
  auto resolve = [&](int32_t p) {
    while (p >= 0 && removed[p]) p = parent[p];
    return p;
  };
  // torch repeats its pass until nothing changes; one pass in this order gets there. A parent
  // comes before its children, so by the time an event is visited its parent has been merged
  // away or not for good, and a parent's child count changes only through a merge into it, which
  // needs it to have had a single child, the one just visited.
  for (uint32_t c : order_) {
    if (parent[c] < 0) continue;
    int32_t p = parent[c] = resolve(parent[c]);
    if (p < 0) continue;
    if (name[p] != name[c] || child_count[p] != 1) continue;
    child_count[p] = child_count[c];
    if (kernel_ns != nullptr) kernel_ns[p] = kernel_ns[c];
    if (!kernel_us_.empty()) kernel_us_[p] = kernel_us_[c];
    removed[c] = 1;
    any_removed_ = true;
  }
}

// Backward ops take the stack of their forward op (torch's _set_backward_stacktraces). The
// forward op is the first (in torch's order) op outside backward code with the same sequence
// number; JSON traces give no usable thread id to match on.
void FunctionEventsBuilder::AssignBackwardStacks() {
  if (!want_stacks_) return;
  const size_t n = f_.start_.size();
  LargeVector<int32_t> bw(n, -1);
  for (uint32_t c = 0; c < n; ++c) {
    if (removed_[c]) continue;
    int32_t p = static_cast<int32_t>(c);
    while (p >= 0 && !backward_[p]) p = f_.parent_[p];
    bw[c] = p;
  }
  auto earlier = [&](uint32_t a, uint32_t b) {
    if (f_.start_[a] != f_.start_[b]) return f_.start_[a] < f_.start_[b];
    if (f_.end_[a] != f_.end_[b]) return f_.end_[a] > f_.end_[b];
    return a < b;
  };
  std::unordered_map<int64_t, uint32_t> forward;  // sequence number -> first forward op
  for (uint32_t c = 0; c < n; ++c) {
    if (removed_[c] || bw[c] >= 0 || seq_[c] < 0) continue;
    auto [it, inserted] = forward.emplace(seq_[c], c);
    if (!inserted && earlier(c, it->second)) it->second = c;
  }
  LargeVector<uint32_t> stacks(n, 0);
  for (uint32_t c = 0; c < n; ++c) {
    if (removed_[c] || bw[c] < 0) continue;
    int64_t seq = seq_[bw[c]];
    uint32_t stack = 0;
    if (seq >= 0) {
      auto it = forward.find(seq);
      if (it != forward.end()) stack = f_.stack_[it->second];
    }
    stacks[c] = stack;
  }
  for (uint32_t c = 0; c < n; ++c) {
    if (!removed_[c] && bw[c] >= 0) f_.stack_[c] = stacks[c];
  }
}

void FunctionEventsBuilder::RemoveMergedAndSum() {
  const size_t n = f_.start_.size();
  const bool memory = !f_.cpu_memory_.empty();
  const bool device = !kernel_ns_.empty();
  if (device) f_.cuda_total_ = kernel_ns_;
  f_.children_cpu_.assign(n, 0);
  if (memory) {
    f_.children_cpu_memory_.assign(n, 0);
    if (!f_.cuda_memory_.empty()) f_.children_cuda_memory_.assign(n, 0);
  }
  // Children follow their parents within a thread, so one backward pass sums subtrees.
  for (size_t k = order_.size(); k-- > 0;) {
    uint32_t c = order_[k];
    if (removed_[c]) continue;
    int32_t p = f_.parent_[c];
    if (p < 0) continue;
    // Saturating: hostile sizes and times near int64's limits would overflow the sums.
    auto add = [](auto& total, int64_t v) { total = SaturatingAdd(total, v); };
    add(f_.children_cpu_[p], f_.end_[c] - f_.start_[c]);
    if (memory) {
      add(f_.children_cpu_memory_[p], f_.cpu_memory_[c]);
      if (!f_.cuda_memory_.empty()) add(f_.children_cuda_memory_[p], f_.cuda_memory_[c]);
    }
    if (device) add(f_.cuda_total_[p], f_.cuda_total_[c]);
  }
  if (device) f_.self_cuda_ = std::move(kernel_ns_);
  if (!any_removed_) return;
  for (size_t c = 0; c < n; ++c) {
    if (removed_[c]) f_.flags_[c] |= FunctionEvents::kRemoved;
  }
}

// torch 2.x's trace start (result.trace_start_ns()), which its float times count from: the
// start of the profiler's "Trace" span ("PyTorch Profiler (N)"); the first event's start when a
// trace has no such span.
int64_t FunctionEventsBuilder::TraceStartNs() const {
  const EventTable& ev = trace_.events;
  int64_t earliest = INT64_MAX, span = INT64_MAX;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.phase(i) != 'X') continue;
    earliest = std::min(earliest, ev.ts(i));
    if (trace_.category_name(ev.category(i)) == "Trace" &&
        trace_.str(ev.name(i)).starts_with("PyTorch Profiler"))
      span = std::min(span, ev.ts(i));
  }
  return span != INT64_MAX ? span : earliest == INT64_MAX ? 0 : earliest;
}

// torch 2.x's FunctionEvent times: time_range holds (t - trace start) / 1000 as floats;
// cpu_time_total is end - start, self_cpu_time_total that minus the sum of its children's in
// their order, device_time_total the sum of its kernels' float durations plus the sum of its
// children's device totals.
void FunctionEventsBuilder::TorchFloatTimes() {
  const size_t n = f_.start_.size();
  f_.float_cpu_total_.assign(n, 0.0);
  f_.float_self_cpu_.assign(n, 0.0);
  const bool device = !kernel_us_.empty();
  for (size_t c = 0; c < n; ++c) {
    const double total = FloatUs(f_.end_[c]) - FloatUs(f_.start_[c]);
    if (f_.flags_[c] & FunctionEvents::kDevice) continue;
    f_.float_cpu_total_[c] = total;
  }
  // Children in torch's order: the CPU order within a thread, which order_ holds.
  std::vector<double> children_cpu(n, 0.0);
  std::vector<uint32_t> child_begin(n + 1, 0), children;
  for (uint32_t c : order_) {
    if (removed_[c] || f_.parent_[c] < 0) continue;
    children_cpu[f_.parent_[c]] += f_.float_cpu_total_[c];
    child_begin[f_.parent_[c] + 1] += 1;
  }
  for (size_t c = 0; c < n; ++c) {
    if (!(f_.flags_[c] & FunctionEvents::kDevice) && !removed_[c])
      f_.float_self_cpu_[c] = f_.float_cpu_total_[c] - children_cpu[c];
  }
  if (!device) return;
  for (size_t c = 0; c < n; ++c) child_begin[c + 1] += child_begin[c];
  children.resize(child_begin[n]);
  std::vector<uint32_t> fill(child_begin.begin(), child_begin.end() - 1);
  for (uint32_t c : order_) {
    if (removed_[c] || f_.parent_[c] < 0) continue;
    children[fill[f_.parent_[c]]++] = c;
  }
  f_.float_cuda_total_.assign(n, 0.0);
  f_.float_self_cuda_.assign(n, 0.0);
  for (size_t c = 0; c < n; ++c) {
    if (f_.flags_[c] & FunctionEvents::kDevice) {
      f_.float_cuda_total_[c] = f_.float_self_cuda_[c] =
          FloatUs(f_.end_[c]) - FloatUs(f_.start_[c]);
    }
  }
  // Children come after their parent in order_, so a backward pass sees them first.
  for (size_t k = order_.size(); k-- > 0;) {
    const uint32_t c = order_[k];
    if (removed_[c]) continue;
    double of_children = 0.0;
    for (uint32_t j = child_begin[c]; j < child_begin[c + 1]; ++j)
      of_children += f_.float_cuda_total_[children[j]];
    f_.float_cuda_total_[c] = kernel_us_[c] + of_children;
    f_.float_self_cuda_[c] = f_.float_cuda_total_[c] - of_children;
  }
}

std::unique_ptr<FunctionEvents> FunctionEventsBuilder::Build() {
  Scan();
  AttributeMemory();
  Order();
  Nest();
  MarkBackwardFunctions();
  AttachDeviceWork();
  MergeLoneSameNameChildren();
  AssignBackwardStacks();
  RemoveMergedAndSum();
  if (f_.torch_format == TorchFormat::k2) TorchFloatTimes();
  f_.trace_event_ = std::move(candidate_events_);

  // Table flags: the trace's own metadata when it has it, else what the data shows.
  auto flag = [&](std::string_view key, bool fallback) {
    const std::string* v = trace_.FindMetadata(key);
    if (v == nullptr) return fallback;
    return *v != "0" && *v != "false" && *v != "\"0\"" && *v != "\"false\"";
  };
  bool any_flops = false;
  for (int64_t f : f_.flops_) any_flops |= f > 0;
  f_.profile_memory = flag("profile_memory", f_.memory_records > 0);
  f_.with_flops = flag("with_flops", any_flops);
  return std::move(out_);
}

std::unique_ptr<FunctionEvents> BuildFunctionEvents(const Trace& trace, const IttSelection& itt) {
  return FunctionEventsBuilder(trace, itt).Build();
}

}  // namespace profsh
