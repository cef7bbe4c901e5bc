// profsh's own rules on copies, synchronizations, launches and recompiles: each fires only where
// the trace shows the cause (the copy's memory kind, the call's name, the kernel's and its
// launch's durations, the compiled region's recompile number). The GPU-gap rule is in
// recommendations_gaps.cpp.
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/analysis/compile_analysis.h"
#include "engine/analysis/function_events.h"
#include "engine/analysis/model/compile_roles.h"
#include "engine/analysis/tensorboard/recommendations.h"
#include "engine/analysis/tensorboard/recommendations_evidence.h"
#include "engine/analysis/tensorboard/recommendations_rules.h"
#include "engine/util/human_text.h"

namespace profsh {

namespace recommendations {

namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.rfind(prefix, 0) == 0;
}

// A copy or set call that returns only once the device is done: cudaMemcpy, cudaMemset2D,
// cuMemcpyDtoH_v2, hipMemcpy, ... (every copy and set call without "Async" in its name).
bool IsSynchronousCopyOrSet(std::string_view name) {
  const bool copy_or_set = StartsWith(name, "cudaMemcpy") || StartsWith(name, "cudaMemset") ||
                           StartsWith(name, "cuMemcpy") || StartsWith(name, "cuMemset") ||
                           StartsWith(name, "hipMemcpy") || StartsWith(name, "hipMemset");
  return copy_or_set && name.find("Async") == std::string_view::npos;
}

// A call that waits for a whole device or stream.
bool IsDeviceOrStreamSync(std::string_view name) {
  for (std::string_view sync :
       {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cuCtxSynchronize", "cuStreamSynchronize",
        "hipDeviceSynchronize", "hipStreamSynchronize"})
    if (name == sync) return true;
  return false;
}

std::string_view NameOf(const Trace& trace, uint32_t event) {
  return trace.str(trace.events.name(event));
}

}  // namespace

std::optional<Recommendation> PageableCopies(const EventModel& model,
                                             const RecommendationOptions& options) {
  const Trace& trace = model.trace();
  const DeviceWorkIds& work = model.ids().device_work;
  Tally copies, operators;
  std::vector<uint32_t> scratch;
  for (size_t k = 0; k < work.size(); ++k) {
    const uint32_t e = work.event[k];
    if (model.role(e).work != DeviceWorkKind::kMemcpy) continue;
    const std::string_view name = NameOf(trace, e);
    if (name.find("Pageable") == std::string_view::npos) continue;
    const int64_t dur = trace.events.dur(e);
    copies.Add(std::string(name), dur);
    const uint32_t launch = LaunchOf(model, k);
    operators.Add(
        launch == kNoIndex ? "(no launch call)" : OperatorOfRuntime(model, launch, &scratch), dur);
  }
  if (copies.empty()) return std::nullopt;
  Recommendation r;
  r.rule = "pageable_memcpy";
  r.time_at_stake_ns = copies.total_ns();
  r.text = Plural(copies.total_count(), "copy", "copies") +
           " between the device and pageable host memory took " + FormatTime(copies.total_ns()) +
           " on the device. A pageable copy goes through a staging buffer and blocks the host; "
           "pin the host tensors (DataLoader(pin_memory=True), tensor.pin_memory()) and copy "
           "with non_blocking=True, or keep the values on the device.";
  r.evidence = "copies: " + copies.Describe(options.evidence_names) +
               "; from: " + operators.Describe(options.evidence_names);
  return r;
}

std::optional<Recommendation> SynchronousCopies(const EventModel& model,
                                                const RecommendationOptions& options) {
  const Trace& trace = model.trace();
  const RuntimeIds& runtime = model.ids().runtime;
  Tally calls, operators;
  std::vector<uint32_t> scratch;
  for (size_t r = 0; r < runtime.size(); ++r) {
    const uint32_t e = runtime.event[r];
    const std::string_view name = NameOf(trace, e);
    if (!IsSynchronousCopyOrSet(name)) continue;
    const int64_t dur = trace.events.dur(e);
    calls.Add(std::string(name), dur);
    operators.Add(OperatorOfRuntime(model, r, &scratch), dur);
  }
  if (calls.empty()) return std::nullopt;
  Recommendation rec;
  rec.rule = "sync_memcpy";
  rec.time_at_stake_ns = calls.total_ns();
  rec.text =
      Plural(calls.total_count(), "synchronous copy or set call", "synchronous copy or set calls") +
      " held the host for " + FormatTime(calls.total_ns()) +
      ": each waits for the device to finish everything queued before it. Use the "
      "asynchronous calls on a stream (non_blocking=True copies into pinned memory) and "
      "synchronize once, where the values are needed.";
  rec.evidence = "calls: " + calls.Describe(options.evidence_names) +
                 "; from: " + operators.Describe(options.evidence_names);
  return rec;
}

std::optional<Recommendation> SynchronizationsInSteps(const EventModel& model,
                                                      const RecommendationOptions& options) {
  const Trace& trace = model.trace();
  const EventIds& ids = model.ids();
  if (ids.steps.empty()) return std::nullopt;
  // Each process's steps by start: (pid, start, end); a call is in a step of its own process.
  struct StepSpan {
    int64_t pid;
    bool pid_is_string;
    int64_t ts, end;
  };
  auto pid_of = [&](uint32_t event) { return trace.tracks[trace.events.track(event)].pid; };
  std::vector<StepSpan> steps;
  for (const StepRange& s : ids.steps) {
    const Ident pid = pid_of(s.event);
    steps.push_back({pid.is_string ? pid.str : pid.number, pid.is_string, trace.events.ts(s.event),
                     trace.events.end(s.event)});
  }
  auto key = [](const StepSpan& s) { return std::make_tuple(s.pid_is_string, s.pid, s.ts); };
  std::sort(steps.begin(), steps.end(),
            [&](const StepSpan& a, const StepSpan& b) { return key(a) < key(b); });
  auto in_step = [&](uint32_t event) {
    const Ident pid = pid_of(event);
    const StepSpan probe{pid.is_string ? pid.str : pid.number, pid.is_string,
                         trace.events.ts(event), 0};
    auto it =
        std::upper_bound(steps.begin(), steps.end(), probe,
                         [&](const StepSpan& a, const StepSpan& b) { return key(a) < key(b); });
    if (it == steps.begin()) return false;
    --it;
    return it->pid == probe.pid && it->pid_is_string == probe.pid_is_string && it->end > probe.ts;
  };
  Tally calls, operators;
  std::vector<uint32_t> scratch;
  for (size_t r = 0; r < ids.runtime.size(); ++r) {
    const uint32_t e = ids.runtime.event[r];
    const std::string_view name = NameOf(trace, e);
    if (!IsDeviceOrStreamSync(name) || !in_step(e)) continue;
    const int64_t dur = trace.events.dur(e);
    calls.Add(std::string(name), dur);
    operators.Add(OperatorOfRuntime(model, r, &scratch), dur);
  }
  if (calls.empty()) return std::nullopt;
  Recommendation rec;
  rec.rule = "sync_in_step";
  rec.time_at_stake_ns = calls.total_ns();
  rec.text = Plural(calls.total_count(), "device or stream synchronization",
                    "device or stream synchronizations") +
             " inside steps held the host for " + FormatTime(calls.total_ns()) +
             ", during which it queued no work. Avoid reading device values on the host in the "
             "loop (.item(), .cpu(), printing, tensor-dependent Python control flow, "
             "torch.nonzero); accumulate on the device and read once per logging interval.";
  rec.evidence = "calls: " + calls.Describe(options.evidence_names) +
                 "; from: " + operators.Describe(options.evidence_names);
  return rec;
}

std::optional<Recommendation> ShortKernels(const EventModel& model,
                                           const RecommendationOptions& options) {
  const Trace& trace = model.trace();
  const DeviceWorkIds& work = model.ids().device_work;
  int64_t launched = 0, kernel_ns = 0, launch_total_ns = 0;
  Tally kernels, operators;
  std::vector<uint32_t> scratch;
  for (size_t k = 0; k < work.size(); ++k) {
    const uint32_t e = work.event[k];
    if (model.role(e).work != DeviceWorkKind::kKernel) continue;
    const uint32_t launch = LaunchOf(model, k);
    if (launch == kNoIndex) continue;
    ++launched;
    const int64_t launch_ns = trace.events.dur(model.ids().runtime.event[launch]);
    const int64_t dur = trace.events.dur(e);
    if (dur >= launch_ns) continue;
    kernel_ns += dur;
    kernels.Add(std::string(NameOf(trace, e)), dur);
    launch_total_ns += launch_ns;
    operators.Add(OperatorOfRuntime(model, launch, &scratch), launch_ns);
  }
  const int64_t short_count = kernels.total_count();
  if (short_count == 0 || short_count < options.min_short_kernels ||
      static_cast<double>(short_count) < options.short_kernel_share * static_cast<double>(launched))
    return std::nullopt;
  Recommendation rec;
  rec.rule = "short_kernels";
  rec.time_at_stake_ns = launch_total_ns;
  const int percent = static_cast<int>(
      100.0 * static_cast<double>(short_count) / static_cast<double>(launched) + 0.5);
  rec.text = std::to_string(short_count) + " of " + std::to_string(launched) + " kernels (" +
             std::to_string(percent) + "%) ran shorter on the device (" + FormatTime(kernel_ns) +
             ") than their launch calls took on the host (" + FormatTime(launch_total_ns) +
             "): the host's launching bounds the device. Fuse them (torch.compile), batch the "
             "work into fewer, larger kernels, or replay them as a CUDA graph.";
  rec.evidence = "launched from (launch time): " + operators.Describe(options.evidence_names) +
                 "; kernels (device time): " + kernels.Describe(options.evidence_names);
  return rec;
}

std::optional<Recommendation> Recompiles(const EventModel& model,
                                         const RecommendationOptions& options) {
  const Trace& trace = model.trace();
  // Only a trace with a "Torch-Compiled Region: F/R" of R >= 1 pays for the operator view.
  bool any = false;
  const std::vector<CompileRole> roles = CompileRolesOfTemplates(trace);
  const auto& templates = trace.events.templates();
  for (size_t t = 0; t < roles.size() && !any; ++t) {
    if (roles[t] != CompileRole::kRegion) continue;
    int64_t frame = -1, recompile = -1;
    ParseCompiledRegion(trace.str(templates[t].name), &frame, &recompile);
    any = recompile >= 1;
  }
  if (!any) return std::nullopt;
  const CompileAnalysis compile = AnalyzeCompile(trace, *BuildFunctionEvents(trace));
  const AnalysisRows& rows = compile.recompiles;
  if (rows.rows.empty()) return std::nullopt;
  const size_t frame_col = rows.Column("frame"), region_col = rows.Column("region"),
               step_col = rows.Column("step"), time_col = rows.Column("compile_time");
  Tally regions;
  std::map<int64_t, int64_t> per_frame;
  for (size_t i = 0; i < rows.rows.size(); ++i) {
    const Cell time = rows.rows.cell(i, time_col);
    const int64_t ns = static_cast<int64_t>(time.double_value * 1000.0 + 0.5);
    std::string what(rows.rows.text(i, region_col));
    const Cell step = rows.rows.cell(i, step_col);
    if (step.kind == Cell::Kind::kInt) what += " in step " + std::to_string(step.int_value);
    regions.Add(what, ns);
    ++per_frame[rows.rows.cell(i, frame_col).int_value];
  }
  Recommendation rec;
  rec.rule = "recompiles";
  rec.time_at_stake_ns = regions.total_ns();
  rec.text = Plural(regions.total_count(), "recompile", "recompiles") + " of " +
             Plural(per_frame.size(), "frame", "frames") + " cost " +
             FormatTime(regions.total_ns()) +
             " of compile time. A guard failed (a new shape, dtype or Python value): mark the "
             "changing sizes dynamic (torch._dynamo.mark_dynamic, dynamic=True), keep Python "
             "values constant, and read why with TORCH_LOGS=recompiles.";
  rec.evidence =
      "regions (compile time before them): " + regions.Describe(options.evidence_names, false);
  return rec;
}

}  // namespace recommendations

std::vector<Recommendation> ProfshRecommendations(const Trace& trace,
                                                  const RecommendationOptions& options) {
  const EventModel& model = ModelOf(trace);
  std::vector<Recommendation> out;
  using Rule = std::optional<Recommendation> (*)(const EventModel&, const RecommendationOptions&);
  for (Rule rule : {recommendations::PageableCopies, recommendations::SynchronousCopies,
                    recommendations::SynchronizationsInSteps, recommendations::GpuGaps,
                    recommendations::ShortKernels, recommendations::Recompiles}) {
    if (std::optional<Recommendation> r = rule(model, options)) {
      r->source = "profsh";
      out.push_back(std::move(*r));
    }
  }
  return out;
}

}  // namespace profsh
