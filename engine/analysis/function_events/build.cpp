// The order of the passes (builder.h lists what each does) and the table flags.
#include "engine/analysis/function_events/builder.h"
#include "engine/analysis/function_events/torch_format.h"

namespace profsh {

std::unique_ptr<FunctionEvents> FunctionEventsBuilder::Build() {
  f_.torch_format = DetectTorchFormat(trace_);
  if (f_.torch_format == TorchFormat::k2) trace_start_ns_ = TorchTraceStartNs(trace_);
  ResolveSchemaConstants();
  ClassifyTemplates();
  ScanEvents();
  LinkDeviceWork();
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
  SetTableFlags();
  return std::move(out_);
}

// What the table shows: the trace's own metadata when it has it, else what the data shows.
void FunctionEventsBuilder::SetTableFlags() {
  auto flag = [&](std::string_view key, bool fallback) {
    const std::string* v = trace_.FindMetadata(key);
    if (v == nullptr) return fallback;
    return *v != "0" && *v != "false" && *v != "\"0\"" && *v != "\"false\"";
  };
  bool any_flops = false;
  for (int64_t f : f_.flops_) any_flops |= f > 0;
  f_.profile_memory = flag("profile_memory", f_.memory_records > 0);
  f_.with_flops = flag("with_flops", any_flops);
}

std::unique_ptr<FunctionEvents> BuildFunctionEvents(const Trace& trace, const IttSelection& itt) {
  return FunctionEventsBuilder(trace, itt).Build();
}

}  // namespace profsh
