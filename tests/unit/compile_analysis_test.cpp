// torch.compile's regions, graph breaks, islands, recompiles and kernel provenance
// (engine/analysis/compile_analysis, docs/ANALYSIS.md "torch.compile") on traces built event by
// event: the roles read from names, the innermost region around an event, the forward a
// backward runs the backward of, compile time as a union of spans, and device work per region.
#include "engine/analysis/compile_analysis.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

#include "engine/analysis/function_events.h"
#include "engine/trace/trace_builder.h"
#include "gpu_views_fixture.h"
#include "test_util.h"

namespace profsh {
namespace {

using testing::CellText;

// A trace written through TraceBuilder, times in µs: host threads of process 1, the device's
// stream 7 in process 0.
class CompileTrace {
 public:
  using IntArgs = std::initializer_list<std::pair<std::string_view, int64_t>>;

  CompileTrace() : trace_(std::make_unique<Trace>()), builder_(*trace_) {}

  void Op(std::string_view name, int64_t tid, int64_t ts, int64_t dur, IntArgs args = {}) {
    Add('X', name, "cpu_op", 1, tid, ts, dur, args);
  }
  void Annotation(std::string_view name, int64_t tid, int64_t ts, int64_t dur) {
    Add('X', name, "user_annotation", 1, tid, ts, dur, {});
  }
  void Launch(std::string_view name, int64_t tid, int64_t ts, int64_t dur, int64_t correlation) {
    Add('X', name, "cuda_runtime", 1, tid, ts, dur, {{"correlation", correlation}});
  }
  void Kernel(std::string_view name, int64_t ts, int64_t dur, int64_t correlation) {
    Add('X', name, "kernel", 0, 7, ts, dur,
        {{"correlation", correlation}, {"device", 0}, {"stream", 7}});
  }
  // One end of a fwdbwd flow ('s' at the forward op's start, 'f' at the backward op's); the id
  // is a field of the event, beside "args".
  void Flow(char phase, int64_t tid, int64_t ts, int64_t id) {
    builder_.BeginArgs();
    ArgValue v;
    v.type = ArgType::kInt;
    v.int_value = id;
    builder_.AddArg("id", true, v, "", false);
    builder_.AddEvent(Fields(phase, "fwdbwd", "fwdbwd", 1, tid, ts, 0), builder_.BuildSchema(), {});
  }

  std::unique_ptr<Trace> Done() {
    EXPECT_TRUE(builder_.Finish().ok());
    return std::move(trace_);
  }

 private:
  static EventFields Fields(char phase, std::string_view name, std::string_view category,
                            int64_t pid, int64_t tid, int64_t ts, int64_t dur) {
    EventFields e;
    e.phase = phase;
    e.name = name;
    e.category = category;
    e.pid = Ident{pid, 0, false};
    e.tid = Ident{tid, 0, false};
    e.ts = ts * 1000;
    e.dur = dur * 1000;
    return e;
  }
  void Add(char phase, std::string_view name, std::string_view category, int64_t pid, int64_t tid,
           int64_t ts, int64_t dur, IntArgs args) {
    uint32_t schema = TraceBuilder::kNoArgs;
    if (args.size() > 0) {
      builder_.BeginArgs();
      for (const auto& [key, value] : args) builder_.AddIntArg(key, value);
      schema = builder_.BuildSchema();
    }
    builder_.AddEvent(Fields(phase, name, category, pid, tid, ts, dur), schema, {});
  }

  std::unique_ptr<Trace> trace_;
  TraceBuilder builder_;
};

CompileAnalysis Analyze(const Trace& trace) {
  const std::unique_ptr<FunctionEvents> events = BuildFunctionEvents(trace);
  return AnalyzeCompile(trace, *events);
}

// The row whose cells in `columns` read `values`; SIZE_MAX when none does.
size_t FindRow(const AnalysisRows& rows,
               std::initializer_list<std::pair<std::string, std::string>> match) {
  for (size_t r = 0; r < rows.rows.size(); ++r) {
    bool all = true;
    for (const auto& [column, value] : match) all = all && CellText(rows, r, column) == value;
    if (all) return r;
  }
  return SIZE_MAX;
}

bool HasNote(const AnalysisRows& rows, std::string_view part) {
  for (const std::string& n : rows.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

// One step holding a guard, a region whose CompiledFunction runs an Inductor C++ kernel and an
// extern ATen call, eager operators, and a recompile of the same frame, each compile done
// before the region it produced.
std::unique_ptr<Trace> OneStepTrace() {
  CompileTrace t;
  t.Annotation("ProfilerStep#1", 1, 0, 1000);
  t.Annotation("_compile.compile_inner (dynamo_timed)", 1, 10, 80);
  t.Op("TorchDynamo Cache Lookup", 1, 95, 4);
  t.Op("Torch-Compiled Region: 0/0", 1, 100, 200);
  t.Op("CompiledFunction", 1, 120, 160);
  t.Op("graph_0_cpp_fused_add_0", 1, 130, 10);
  t.Op("aten::mm", 1, 150, 20);
  t.Op("aten::add", 1, 400, 20);
  t.Op("aten::mul", 1, 430, 10);
  t.Annotation("_compile.compile_inner (dynamo_timed)", 1, 450, 40);
  t.Op("Torch-Compiled Region: 0/1", 1, 500, 100);
  t.Op("CompiledFunction", 1, 510, 80);
  t.Op("aten::div", 1, 700, 10);
  return t.Done();
}

TEST(CompileAnalysis, RegionsAreCalledFramesWithTheirCompiledCode) {
  auto trace = OneStepTrace();
  const CompileAnalysis a = Analyze(*trace);
  const AnalysisRows& r = a.regions;
  ASSERT_EQ(r.rows.size(), 2u);
  const size_t first = FindRow(r, {{"region", "Torch-Compiled Region: 0/0"}});
  ASSERT_NE(first, SIZE_MAX);
  EXPECT_EQ(CellText(r, first, "pass"), "forward");
  EXPECT_EQ(CellText(r, first, "frame"), "0");
  EXPECT_EQ(CellText(r, first, "recompile"), "0");
  EXPECT_EQ(CellText(r, first, "step"), "1");
  EXPECT_EQ(CellText(r, first, "calls"), "1");
  EXPECT_EQ(CellText(r, first, "cpu_time"), "200.000");
  EXPECT_EQ(CellText(r, first, "compile_time"), "0.000");  // its compile ran before it
  EXPECT_EQ(CellText(r, first, "kernels"), "1");           // the C++ kernel
  EXPECT_EQ(CellText(r, first, "depth"), "0");
  EXPECT_EQ(CellText(r, first, "verdict"), "no device work");
  const size_t again = FindRow(r, {{"region", "Torch-Compiled Region: 0/1"}});
  ASSERT_NE(again, SIZE_MAX);
  EXPECT_EQ(CellText(r, again, "recompile"), "1");
  EXPECT_EQ(CellText(r, again, "kernels"), "0");

  // The recompile's compile time is that of the latest compile before it, not the first one's.
  ASSERT_EQ(a.recompiles.rows.size(), 1u);
  EXPECT_EQ(CellText(a.recompiles, 0, "frame"), "0");
  EXPECT_EQ(CellText(a.recompiles, 0, "recompile"), "1");
  EXPECT_EQ(CellText(a.recompiles, 0, "step"), "1");
  EXPECT_EQ(CellText(a.recompiles, 0, "start"), "500.000");
  EXPECT_EQ(CellText(a.recompiles, 0, "compile_time"), "40.000");

  // Guards, compile work, regions and eager operators per step; no row outside the step.
  ASSERT_EQ(a.steps.rows.size(), 1u);
  EXPECT_EQ(CellText(a.steps, 0, "step"), "1");
  EXPECT_EQ(CellText(a.steps, 0, "step_time"), "1000.000");
  EXPECT_EQ(CellText(a.steps, 0, "compile_time"), "120.000");
  EXPECT_EQ(CellText(a.steps, 0, "run_time"), "880.000");
  EXPECT_EQ(CellText(a.steps, 0, "guard_time"), "4.000");
  EXPECT_EQ(CellText(a.steps, 0, "regions"), "2");
  EXPECT_EQ(CellText(a.steps, 0, "graph_breaks"), "0");
  EXPECT_EQ(CellText(a.steps, 0, "recompiles"), "1");
  EXPECT_EQ(CellText(a.steps, 0, "eager_islands"), "2");
  EXPECT_EQ(CellText(a.steps, 0, "eager_time"), "40.000");

  // aten::add and aten::mul are one island: nothing compiled starts between them; aten::div
  // another, after the recompile. The extern aten::mm inside CompiledFunction is compiled code.
  ASSERT_EQ(a.islands.rows.size(), 2u);
  EXPECT_EQ(CellText(a.islands, 0, "tid"), "1");
  EXPECT_EQ(CellText(a.islands, 0, "start"), "400.000");
  EXPECT_EQ(CellText(a.islands, 0, "duration"), "40.000");
  EXPECT_EQ(CellText(a.islands, 0, "op_time"), "30.000");
  EXPECT_EQ(CellText(a.islands, 0, "ops"), "2");
  EXPECT_EQ(CellText(a.islands, 0, "first_op"), "aten::add");
  EXPECT_EQ(CellText(a.islands, 0, "last_op"), "aten::mul");
  EXPECT_EQ(CellText(a.islands, 0, "region"), "");
  EXPECT_EQ(CellText(a.islands, 1, "first_op"), "aten::div");
  EXPECT_EQ(CellText(a.islands, 1, "ops"), "1");

  // On the CPU: the C++ kernel, and the ATen call made directly by CompiledFunction.
  const AnalysisRows& p = a.provenance;
  ASSERT_EQ(p.rows.size(), 2u);
  EXPECT_EQ(CellText(p, 0, "device"), "cpu");
  EXPECT_EQ(CellText(p, 0, "provenance"), "ATen fallback in compiled code");
  EXPECT_EQ(CellText(p, 0, "time"), "20.000");
  EXPECT_EQ(CellText(p, 0, "percentage"), "66.67");
  EXPECT_EQ(CellText(p, 1, "provenance"), "inductor C++ kernel");
  EXPECT_EQ(CellText(p, 1, "kernels"), "1");
}

// Regions nested three deep (a graph break's resumption inside a resumption), written as
// profsh's own recordings write them: each event when it ends, after everything inside it.
std::unique_ptr<Trace> NestedRegionsTrace() {
  CompileTrace t;
  t.Op("CompiledFunction", 1, 10, 90);  // region 0/0's own compiled code
  t.Op("aten::add", 1, 110, 10);        // eager, in 0/0
  t.Annotation("compile_fx_inner (dynamo_timed)", 1, 210, 50);
  t.Op("aten::relu", 1, 300, 10);  // eager, in 1/0
  t.Launch("cudaLaunchKernel", 1, 422, 4, 1);
  t.Op("triton_poi_fused_0", 1, 420, 10);
  t.Op("CompiledFunction", 1, 410, 380);
  t.Op("Torch-Compiled Region: 2/0", 1, 400, 400);
  t.Op("Torch-Compiled Region: 1/0", 1, 200, 700);
  t.Op("aten::sub", 1, 950, 10);  // eager, in 0/0 again, after 1/0 started
  t.Op("Torch-Compiled Region: 0/0", 1, 0, 1000);
  t.Kernel("triton_poi_fused_0", 440, 20, 1);
  return t.Done();
}

TEST(CompileAnalysis, AnEventBelongsToTheInnermostRegionAroundIt) {
  auto trace = NestedRegionsTrace();
  const CompileAnalysis a = Analyze(*trace);
  const AnalysisRows& r = a.regions;
  ASSERT_EQ(r.rows.size(), 3u);
  const size_t outer = FindRow(r, {{"region", "Torch-Compiled Region: 0/0"}});
  const size_t middle = FindRow(r, {{"region", "Torch-Compiled Region: 1/0"}});
  const size_t inner = FindRow(r, {{"region", "Torch-Compiled Region: 2/0"}});
  ASSERT_NE(outer, SIZE_MAX);
  ASSERT_NE(middle, SIZE_MAX);
  ASSERT_NE(inner, SIZE_MAX);
  EXPECT_EQ(CellText(r, outer, "depth"), "0");
  EXPECT_EQ(CellText(r, middle, "depth"), "1");
  EXPECT_EQ(CellText(r, inner, "depth"), "2");
  // Compile work and device work count for the innermost region only.
  EXPECT_EQ(CellText(r, outer, "compile_time"), "0.000");
  EXPECT_EQ(CellText(r, middle, "compile_time"), "50.000");
  EXPECT_EQ(CellText(r, inner, "compile_time"), "0.000");
  EXPECT_EQ(CellText(r, outer, "kernels"), "0");
  EXPECT_EQ(CellText(r, middle, "kernels"), "0");
  EXPECT_EQ(CellText(r, inner, "kernels"), "1");
  EXPECT_EQ(CellText(r, inner, "gpu_busy"), "20.000");
  EXPECT_EQ(CellText(r, inner, "gpu_idle"), "0.000");
  EXPECT_EQ(CellText(r, inner, "mean_launch_delay"), "18.000");
  EXPECT_EQ(CellText(r, inner, "verdict"), "GPU-bound");
  EXPECT_EQ(CellText(r, outer, "verdict"), "no device work");

  ASSERT_EQ(a.steps.rows.size(), 1u);  // no ProfilerStep: one row for the whole trace
  EXPECT_EQ(CellText(a.steps, 0, "step"), "");
  EXPECT_EQ(CellText(a.steps, 0, "step_time"), "1000.000");
  EXPECT_EQ(CellText(a.steps, 0, "regions"), "3");
  EXPECT_EQ(CellText(a.steps, 0, "graph_breaks"), "2");

  // Islands take the innermost region around them, and end where a region starts: aten::add and
  // aten::sub are both in 0/0, with 1/0 starting between them.
  ASSERT_EQ(a.islands.rows.size(), 3u);  // by start
  EXPECT_EQ(CellText(a.islands, 0, "first_op"), "aten::add");
  EXPECT_EQ(CellText(a.islands, 0, "region"), "Torch-Compiled Region: 0/0");
  EXPECT_EQ(CellText(a.islands, 1, "first_op"), "aten::relu");
  EXPECT_EQ(CellText(a.islands, 1, "region"), "Torch-Compiled Region: 1/0");
  EXPECT_EQ(CellText(a.islands, 2, "first_op"), "aten::sub");
  EXPECT_EQ(CellText(a.islands, 2, "region"), "Torch-Compiled Region: 0/0");
  EXPECT_EQ(CellText(a.islands, 2, "ops"), "1");
}

// Five regions whose CompiledFunctions carry sequence numbers 5, 5, 7, 7, 7, and three
// CompiledFunctionBackward on the autograd thread: one with a fwdbwd flow to the first forward
// (while the latest forward numbered 5 is the second), one without a flow, one whose number no
// forward has.
std::unique_ptr<Trace> BackwardTrace() {
  CompileTrace t;
  const int64_t seq[] = {5, 5, 7, 7, 7};
  const int64_t start[] = {0, 200, 400, 600, 1300};
  for (int k = 0; k < 5; ++k) {
    const std::string region = "Torch-Compiled Region: " + std::to_string(k) + "/0";
    t.Op(region, 1, start[k], 100);
    t.Op("CompiledFunction", 1, start[k] + 10, 80, {{"Sequence number", seq[k]}});
  }
  t.Flow('s', 1, 10, 1);
  t.Op("CompiledFunctionBackward", 2, 1000, 50, {{"Sequence number", 5}});
  t.Flow('f', 2, 1000, 1);
  t.Op("CompiledFunctionBackward", 2, 1100, 50, {{"Sequence number", 7}});
  t.Op("CompiledFunctionBackward", 2, 1200, 50, {{"Sequence number", 9}});
  return t.Done();
}

TEST(CompileAnalysis, ABackwardJoinsItsForwardsRegionByFlowThenBySequenceNumber) {
  auto trace = BackwardTrace();
  const AnalysisRows r = Analyze(*trace).regions;
  ASSERT_EQ(r.rows.size(), 8u);  // five forward rows, three backward
  const size_t by_flow =
      FindRow(r, {{"region", "Torch-Compiled Region: 0/0"}, {"pass", "backward"}});
  ASSERT_NE(by_flow, SIZE_MAX);
  EXPECT_EQ(CellText(r, by_flow, "calls"), "1");
  EXPECT_EQ(CellText(r, by_flow, "frame"), "0");
  EXPECT_EQ(CellText(r, by_flow, "cpu_time"), "50.000");
  EXPECT_EQ(FindRow(r, {{"region", "Torch-Compiled Region: 1/0"}, {"pass", "backward"}}), SIZE_MAX);
  // Without a flow: the forward with its number that started last before it (not the later
  // 4/0, not the earlier 2/0).
  const size_t by_sequence =
      FindRow(r, {{"region", "Torch-Compiled Region: 3/0"}, {"pass", "backward"}});
  ASSERT_NE(by_sequence, SIZE_MAX);
  EXPECT_EQ(CellText(r, by_sequence, "frame"), "3");
  const size_t unknown = FindRow(r, {{"region", "CompiledFunctionBackward"}});
  ASSERT_NE(unknown, SIZE_MAX);
  EXPECT_EQ(CellText(r, unknown, "pass"), "backward");
  EXPECT_EQ(CellText(r, unknown, "frame"), "");
  EXPECT_TRUE(HasNote(r, "lead to no CompiledFunction"));
}

// Compile spans nested in each other and overlapping across threads, in and out of two steps
// and a region.
std::unique_ptr<Trace> CompileSpansTrace() {
  CompileTrace t;
  t.Annotation("ProfilerStep#1", 1, 0, 120);
  t.Annotation("ProfilerStep#2", 1, 120, 280);
  t.Annotation("_compile.compile_inner (dynamo_timed)", 1, 0, 100);
  t.Annotation("compile_fx_inner (dynamo_timed)", 1, 20, 40);
  t.Annotation("async_compile.wait (dynamo_timed)", 2, 50, 100);  // a compile worker
  t.Op("Torch-Compiled Region: 0/0", 1, 200, 200);
  t.Annotation("backward._backward_impl (dynamo_timed)", 1, 210, 50);
  t.Annotation("compile_fx_inner (dynamo_timed)", 1, 220, 20);
  t.Annotation("GraphLowering.run (dynamo_timed)", 1, 250, 30);
  t.Annotation("async_compile.wait (dynamo_timed)", 2, 420, 40);
  t.Annotation("tail", 3, 450, 50);
  return t.Done();
}

TEST(CompileAnalysis, CompileTimeIsTheUnionOfTheCompileSpans) {
  auto trace = CompileSpansTrace();
  const CompileAnalysis a = Analyze(*trace);
  // The region's spans [210, 260) ⊃ [220, 240) and [250, 280): 70 µs, not their 100 µs sum.
  ASSERT_EQ(a.regions.rows.size(), 1u);
  EXPECT_EQ(CellText(a.regions, 0, "compile_time"), "70.000");
  EXPECT_EQ(CellText(a.regions, 0, "step"), "2");
  // The union [0, 150) ∪ [210, 280) ∪ [420, 460), clipped to each step and to the time outside
  // them; the rows add up to the trace's 500 µs.
  ASSERT_EQ(a.steps.rows.size(), 3u);
  const size_t one = FindRow(a.steps, {{"step", "1"}});
  const size_t two = FindRow(a.steps, {{"step", "2"}});
  const size_t outside = FindRow(a.steps, {{"step", ""}});
  ASSERT_NE(one, SIZE_MAX);
  ASSERT_NE(two, SIZE_MAX);
  ASSERT_NE(outside, SIZE_MAX);
  EXPECT_EQ(CellText(a.steps, one, "step_time"), "120.000");
  EXPECT_EQ(CellText(a.steps, one, "compile_time"), "120.000");
  EXPECT_EQ(CellText(a.steps, one, "run_time"), "0.000");
  EXPECT_EQ(CellText(a.steps, two, "step_time"), "280.000");
  EXPECT_EQ(CellText(a.steps, two, "compile_time"), "100.000");
  EXPECT_EQ(CellText(a.steps, two, "run_time"), "180.000");
  EXPECT_EQ(CellText(a.steps, two, "regions"), "1");
  EXPECT_EQ(CellText(a.steps, outside, "step_time"), "100.000");
  EXPECT_EQ(CellText(a.steps, outside, "compile_time"), "40.000");
}

// A region whose CompiledFunction launches two triton kernels and an ATen fallback, each only
// after the device ran out of work, and eager ATen work outside it.
std::unique_ptr<Trace> DeviceWorkTrace() {
  CompileTrace t;
  t.Op("Torch-Compiled Region: 0/0", 1, 0, 200);
  t.Op("CompiledFunction", 1, 5, 190);
  t.Op("triton_poi_fused_add_0", 1, 10, 10);
  t.Launch("cudaLaunchKernel", 1, 12, 6, 1);
  t.Op("triton_red_fused_sum_1", 1, 100, 10);
  t.Launch("cudaLaunchKernel", 1, 102, 6, 2);
  t.Op("aten::index", 1, 150, 10);
  t.Launch("cudaLaunchKernel", 1, 152, 4, 3);
  t.Op("aten::add", 1, 400, 20);
  t.Launch("cudaLaunchKernel", 1, 405, 5, 4);
  t.Kernel("triton_poi_fused_add_0", 20, 5, 1);
  t.Kernel("triton_red_fused_sum_1", 110, 4, 2);
  t.Kernel("index_kernel", 160, 10, 3);
  t.Kernel("vectorized_elementwise_kernel", 410, 5, 4);
  return t.Done();
}

TEST(CompileAnalysis, DeviceWorkOfARegionAndWhereKernelsComeFrom) {
  auto trace = DeviceWorkTrace();
  const CompileAnalysis a = Analyze(*trace);
  const AnalysisRows& r = a.regions;
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(CellText(r, 0, "kernels"), "3");
  EXPECT_EQ(CellText(r, 0, "gpu_busy"), "19.000");
  EXPECT_EQ(CellText(r, 0, "gpu_idle"), "131.000");
  EXPECT_EQ(CellText(r, 0, "host_wait_share"), "1.0");
  EXPECT_EQ(CellText(r, 0, "mean_launch_delay"), "8.000");
  EXPECT_EQ(CellText(r, 0, "short_kernels"), "2");
  EXPECT_EQ(CellText(r, 0, "verdict"), "CPU-bound: consider CUDA graphs (mode='reduce-overhead')");

  const AnalysisRows& p = a.provenance;
  const size_t fallback =
      FindRow(p, {{"device", "gpu"}, {"provenance", "ATen fallback in compiled code"}});
  const size_t eager = FindRow(p, {{"device", "gpu"}, {"provenance", "ATen eager"}});
  const size_t pointwise = FindRow(p, {{"device", "gpu"}, {"provenance", "inductor pointwise"}});
  const size_t reduction = FindRow(p, {{"device", "gpu"}, {"provenance", "inductor reduction"}});
  ASSERT_NE(fallback, SIZE_MAX);
  ASSERT_NE(eager, SIZE_MAX);
  ASSERT_NE(pointwise, SIZE_MAX);
  ASSERT_NE(reduction, SIZE_MAX);
  EXPECT_EQ(fallback, 0u);  // the most time first
  EXPECT_EQ(CellText(p, fallback, "time"), "10.000");
  EXPECT_EQ(CellText(p, fallback, "percentage"), "41.67");
  EXPECT_EQ(CellText(p, eager, "time"), "5.000");
  EXPECT_EQ(CellText(p, reduction, "percentage"), "16.67");
  // On the CPU, the triton launches are not ATen calls; aten::index is.
  const size_t cpu = FindRow(p, {{"device", "cpu"}});
  ASSERT_NE(cpu, SIZE_MAX);
  EXPECT_EQ(CellText(p, cpu, "provenance"), "ATen fallback in compiled code");
  EXPECT_EQ(CellText(p, cpu, "kernels"), "1");
  EXPECT_EQ(p.rows.size(), 5u);
}

TEST(CompileAnalysis, WorkLaunchedByAGraphReplayIsCudaGraphs) {
  CompileTrace t;
  t.Op("Torch-Compiled Region: 0/0", 1, 0, 100);
  t.Op("CompiledFunction", 1, 5, 90);
  t.Launch("cudaGraphLaunch", 1, 10, 5, 1);
  t.Kernel("triton_poi_fused_0", 20, 5, 1);
  t.Kernel("triton_poi_fused_1", 60, 5, 1);
  auto trace = t.Done();
  const CompileAnalysis a = Analyze(*trace);
  ASSERT_EQ(a.regions.rows.size(), 1u);
  EXPECT_EQ(CellText(a.regions, 0, "kernels"), "2");
  EXPECT_EQ(CellText(a.regions, 0, "verdict"), "CUDA graphs in use");
  ASSERT_EQ(a.provenance.rows.size(), 1u);
  EXPECT_EQ(CellText(a.provenance, 0, "provenance"), "CUDA graph replay");
  EXPECT_EQ(CellText(a.provenance, 0, "kernels"), "2");
}

TEST(CompileAnalysis, ATraceWithoutCompiledCodeSaysSo) {
  auto trace = testing::MustImport(testing::kGpuViewsTrace);
  const CompileAnalysis a = Analyze(*trace);
  EXPECT_EQ(a.regions.rows.size(), 0u);
  EXPECT_TRUE(HasNote(a.regions, "no compiled regions"));
  EXPECT_EQ(a.steps.rows.size(), 0u);
  // Its device work is ATen's, eager, or named by its library.
  const size_t cublas = FindRow(a.provenance, {{"provenance", "cuBLAS"}});
  ASSERT_NE(cublas, SIZE_MAX);
  EXPECT_NE(FindRow(a.provenance, {{"provenance", "memcpy"}}), SIZE_MAX);
  EXPECT_NE(FindRow(a.provenance, {{"provenance", "ATen eager"}}), SIZE_MAX);
}

}  // namespace
}  // namespace profsh
