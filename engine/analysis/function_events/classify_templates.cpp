// What each event template is to the operator view, decided once per template (a trace has a
// few thousand templates for millions of events): an operator (CPU op, user range, runtime call,
// device work, GPU-side annotation), a memory record, or nothing; its flags, display name, shapes
// and stack; and where its ids sit among the event's inline words.
#include <algorithm>

#include "engine/analysis/event_kind.h"
#include "engine/analysis/function_events/builder.h"

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

}  // namespace

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

void FunctionEventsBuilder::ClassifyTemplates() {
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

  const auto memory_name = trace_.strings.Find(kineto::kMemoryEvent);
  const auto oom_name = trace_.strings.Find(kineto::kOutOfMemoryEvent);
  const auto& templates = trace_.events.templates();
  info_.assign(templates.size(), TemplateInfo{});
  itt_left_out_.assign(templates.size(), 0);
  for (size_t t = 0; t < templates.size(); ++t) {
    const EventTemplate& tp = templates[t];
    TemplateInfo& ti = info_[t];
    char ph = EventTable::PhaseOf(tp.kind);
    if (ph == 'X') {
      const auto category = EventTable::CategoryOf(tp.kind);
      CategoryClass cls = category_class[category];
      if (cls == CategoryClass::kSkip) continue;
      if (itt_category[category] && !IttTaskJoins(tp.schema_plus_one)) {
        itt_left_out_[t] = 1;
        any_itt_left_out_ = true;
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
      if (!(ti.flags & FunctionEvents::kDevice) && ti.has_args) {
        const uint32_t schema = tp.schema_plus_one - 1;
        if (want_inputs_) ti.inputs = schema_inputs_[schema];
        if (want_stacks_) ti.stack = schema_stack_[schema];
      }
    } else if (ph == 'i' || ph == 'I') {
      if (memory_name && tp.name == *memory_name) ti.role = kMemoryRecord;
      if (oom_name && tp.name == *oom_name) ti.role = kOutOfMemory;
    }
  }

  // The ids that link device work to its op or runtime call: read straight from the event's
  // inline words when the template's schema keeps them there (always, in Kineto traces).
  for (size_t t = 0; t < templates.size(); ++t) {
    TemplateInfo& ti = info_[t];
    if (ti.role != kOperator || templates[t].schema_plus_one == 0) continue;
    const uint32_t schema = templates[t].schema_plus_one - 1;
    auto slot = [&](Key key, TemplateInfo::Id* id) {
      if (!reader_.InlineIntSlot(schema, key, &id->word, &id->words)) id->words = 0;
    };
    slot(ti.flags & FunctionEvents::kRuntime ? kCorrelation : kExternal, &ti.own_id);
    if (ti.IsDeviceWork()) slot(kCorrelation, &ti.correlation);
  }
}

}  // namespace profsh
