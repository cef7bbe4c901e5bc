// The device-time analyses on small traces made for each rule: overlaps, idle categories, the
// last ProfilerStep, no kernels, no rank, two devices, HTA's rounding, "others".
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "engine/analysis/averages_table.h"
#include "engine/analysis/gpu_analyses.h"
#include "engine/analysis/key_averages.h"
#include "test_util.h"

namespace profsh {
namespace {

using testing::MustImport;

std::string Kernel(const std::string& name, double ts, double dur, int64_t correlation,
                   int64_t stream = 7, int64_t device = 0, const std::string& cat = "kernel") {
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name +
         R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(ts) + R"(, "dur": )" +
         std::to_string(dur) + R"(, "args": {"device": )" + std::to_string(device) +
         R"(, "stream": )" + std::to_string(stream) + R"(, "correlation": )" +
         std::to_string(correlation) + "}}";
}

std::string Runtime(const std::string& name, double ts, double dur, int64_t correlation) {
  return R"({"ph": "X", "cat": "cuda_runtime", "name": ")" + name +
         R"(", "pid": 1, "tid": 1, "ts": )" + std::to_string(ts) + R"(, "dur": )" +
         std::to_string(dur) + R"(, "args": {"correlation": )" + std::to_string(correlation) + "}}";
}

std::string Step(int64_t n, double ts, double dur) {
  return R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#)" + std::to_string(n) +
         R"(", "pid": 1, "tid": 1, "ts": )" + std::to_string(ts) + R"(, "dur": )" +
         std::to_string(dur) + "}";
}

std::string TraceOf(const std::vector<std::string>& events, const std::string& extra = "") {
  std::string json = "{" + extra + R"("traceEvents": [)";
  for (size_t i = 0; i < events.size(); ++i) json += (i ? ", " : "") + events[i];
  return json + "]}";
}

Cell At(const AnalysisRows& rows, size_t row, const std::string& column) {
  size_t c = rows.Column(column);
  EXPECT_NE(c, SIZE_MAX) << column;
  return rows.rows.at(row).at(c);
}
int64_t IntAt(const AnalysisRows& rows, size_t row, const std::string& column) {
  const Cell cell = At(rows, row, column);
  EXPECT_EQ(cell.kind, Cell::Kind::kInt) << column;
  return cell.int_value;
}
double DoubleAt(const AnalysisRows& rows, size_t row, const std::string& column) {
  const Cell cell = At(rows, row, column);
  EXPECT_EQ(cell.kind, Cell::Kind::kDouble) << column;
  return cell.double_value;
}
bool NotesMention(const AnalysisRows& rows, const std::string& text) {
  for (const auto& note : rows.notes)
    if (note.find(text) != std::string::npos) return true;
  return false;
}

// A compute kernel [1000, 1100), a collective [1050, 1150) half under it, a copy [1200, 1210).
std::unique_ptr<Trace> OverlapTrace() {
  return MustImport(
      TraceOf({Runtime("cudaLaunchKernel", 900, 5, 1), Runtime("cudaLaunchKernel", 910, 5, 2),
               Runtime("cudaMemcpyAsync", 920, 5, 3), Kernel("gemm_kernel", 1000, 100, 1),
               Kernel("ncclKernel_AllReduce_RING", 1050, 100, 2, 20),
               Kernel("Memcpy HtoD (Pageable -> Device)", 1200, 10, 3, 7, 0, "gpu_memcpy")}));
}

TEST(GpuAnalyses, TemporalBreakdownCountsOverlapsOnce) {
  auto trace = OverlapTrace();
  GpuEvents g = BuildGpuEvents(*trace);
  AnalysisRows rows = TemporalBreakdown(g, false);
  ASSERT_EQ(rows.rows.size(), 1u);
  EXPECT_EQ(IntAt(rows, 0, "rank"), 0);  // no distributedInfo: rank 0
  EXPECT_EQ(IntAt(rows, 0, "kernel_time"), 210);
  EXPECT_EQ(IntAt(rows, 0, "idle_time"), 50);  // [1150, 1200)
  EXPECT_EQ(IntAt(rows, 0, "compute_time"), 100);
  EXPECT_EQ(IntAt(rows, 0, "non_compute_time"), 60);
  EXPECT_DOUBLE_EQ(DoubleAt(rows, 0, "idle_time_pctg"), 23.81);
  EXPECT_DOUBLE_EQ(DoubleAt(rows, 0, "compute_time_pctg"), 47.62);
  EXPECT_DOUBLE_EQ(DoubleAt(rows, 0, "non_compute_time_pctg"), 28.57);
  EXPECT_EQ(IntAt(rows, 0, "exposed_comm_time"), 50);  // [1100, 1150)
  EXPECT_EQ(IntAt(rows, 0, "exposed_memory_time"), 10);
}

TEST(GpuAnalyses, KernelTypesAndOverlapShareTheSameSweep) {
  auto trace = OverlapTrace();
  GpuEvents g = BuildGpuEvents(*trace);
  KernelBreakdown b = ComputeKernelBreakdown(g, {}, *trace);
  ASSERT_EQ(b.by_type.rows.size(), 4u);
  std::map<std::string, std::pair<int64_t, double>> by_type;
  for (size_t r = 0; r < b.by_type.rows.size(); ++r)
    by_type[std::string(b.by_type.rows.text(r, 0))] = {b.by_type.rows.cell(r, 1).int_value,
                                                       b.by_type.rows.cell(r, 2).double_value};
  EXPECT_EQ(by_type["COMPUTATION"].first, 50);
  EXPECT_EQ(by_type["COMPUTATION overlapping COMMUNICATION"].first, 50);
  EXPECT_EQ(by_type["COMMUNICATION"].first, 50);
  EXPECT_EQ(by_type["MEMORY"].first, 10);
  EXPECT_DOUBLE_EQ(by_type["MEMORY"].second, 6.2);  // 6.25 rounds to even, as pandas does
  AnalysisRows overlap = CommCompOverlap(g);
  ASSERT_EQ(overlap.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(DoubleAt(overlap, 0, "comp_comm_overlap_pctg"), 50.0);
}

TEST(GpuAnalyses, IdleTimeCategories) {
  auto trace =
      MustImport(TraceOf({Runtime("cudaLaunchKernel", 990, 2, 1), Kernel("k1", 1000, 10, 1),
                          // launched after k1 ended: the host was late
                          Runtime("cudaLaunchKernel", 1012, 2, 2), Kernel("k2", 1015, 10, 2),
                          // launched long before, 5 µs after k2: launch overhead
                          Runtime("cudaLaunchKernel", 995, 2, 3), Kernel("k3", 1030, 10, 3),
                          // launched long before, 60 µs after k3: something else
                          Runtime("cudaLaunchKernel", 997, 2, 4), Kernel("k4", 1100, 10, 4)}));
  GpuEvents g = BuildGpuEvents(*trace);
  IdleTimeBreakdown b = ComputeIdleTimeBreakdown(g, {});
  ASSERT_EQ(b.breakdown.rows.size(), 3u);
  EXPECT_EQ(At(b.breakdown, 0, "idle_category").text, "host_wait");
  EXPECT_EQ(IntAt(b.breakdown, 0, "idle_time"), 5);
  EXPECT_EQ(At(b.breakdown, 1, "idle_category").text, "kernel_wait");
  EXPECT_EQ(IntAt(b.breakdown, 1, "idle_time"), 5);
  EXPECT_EQ(At(b.breakdown, 2, "idle_category").text, "other");
  EXPECT_EQ(IntAt(b.breakdown, 2, "idle_time"), 60);
  EXPECT_DOUBLE_EQ(DoubleAt(b.breakdown, 2, "idle_time_ratio"), 0.86);
  // A delay threshold above 60 µs makes the last gap launch overhead too.
  IdleTimeOptions wide;
  wide.consecutive_kernel_delay = 61;
  IdleTimeBreakdown w = ComputeIdleTimeBreakdown(g, wide);
  EXPECT_EQ(IntAt(w.breakdown, 1, "idle_time"), 65);
  EXPECT_EQ(IntAt(w.interval_stats, 1, "count"), 2);
}

std::unique_ptr<Trace> ThreeSteps(const std::string& extra = "") {
  return MustImport(TraceOf(
      {Step(1, 0, 100), Step(2, 100, 100), Step(3, 200, 100), Runtime("cudaLaunchKernel", 50, 5, 1),
       Kernel("k", 60, 10, 1), Runtime("cudaLaunchKernel", 150, 5, 2), Kernel("k", 160, 10, 2),
       Runtime("cudaLaunchKernel", 250, 5, 3), Kernel("k", 260, 10, 3)},
      extra));
}

TEST(GpuAnalyses, LastProfilerStepIsLeftOutUnlessAskedFor) {
  auto trace = ThreeSteps();
  GpuEvents without_last = BuildGpuEvents(*trace);
  AnalysisRows rows = TemporalBreakdown(without_last, true);
  ASSERT_EQ(rows.rows.size(), 3u);  // the whole trace, then steps 1 and 2
  EXPECT_EQ(IntAt(rows, 0, "kernel_time"), 110);
  EXPECT_EQ(At(rows, 0, "step").kind, Cell::Kind::kEmpty);
  EXPECT_EQ(IntAt(rows, 1, "step"), 1);
  EXPECT_EQ(IntAt(rows, 1, "kernel_time"), 10);
  EXPECT_EQ(IntAt(rows, 2, "step"), 2);
  EXPECT_TRUE(NotesMention(rows, "last ProfilerStep"));
  LaunchStats launches = ComputeLaunchStats(without_last, {}, *trace);
  EXPECT_EQ(launches.launches.rows.size(), 2u);

  GpuEventOptions keep;
  keep.include_last_profiler_step = true;
  GpuEvents with_last = BuildGpuEvents(*trace, keep);
  AnalysisRows all = TemporalBreakdown(with_last, true);
  EXPECT_EQ(IntAt(all, 0, "kernel_time"), 210);
  EXPECT_EQ(all.rows.size(), 4u);
  EXPECT_EQ(ComputeLaunchStats(with_last, {}, *trace).launches.rows.size(), 3u);
}

TEST(GpuAnalyses, OneStepKeepsEverything) {
  auto trace = MustImport(
      TraceOf({Step(1, 0, 100), Runtime("cudaLaunchKernel", 50, 5, 1), Kernel("k", 60, 10, 1),
               Runtime("cudaLaunchKernel", 150, 5, 2), Kernel("k", 160, 10, 2)}));
  EXPECT_EQ(IntAt(TemporalBreakdown(BuildGpuEvents(*trace), false), 0, "kernel_time"), 110);
}

TEST(GpuAnalyses, NoKernelsGiveEmptyRowsAndANote) {
  auto trace = MustImport(TraceOf({Step(1, 0, 100), Step(2, 100, 100),
                                   R"({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1,
                                       "tid": 1, "ts": 10, "dur": 5})"}));
  GpuEvents g = BuildGpuEvents(*trace);
  AnalysisRows temporal = TemporalBreakdown(g, true);
  EXPECT_TRUE(temporal.rows.empty());
  EXPECT_TRUE(NotesMention(temporal, "no device work"));
  KernelBreakdown k = ComputeKernelBreakdown(g, {}, *trace);
  EXPECT_TRUE(k.by_type.rows.empty());
  EXPECT_TRUE(k.by_kernel.rows.empty());
  EXPECT_TRUE(NotesMention(k.by_kernel, "no device work"));
  IdleTimeBreakdown idle = ComputeIdleTimeBreakdown(g, {});
  EXPECT_TRUE(idle.breakdown.rows.empty());
  EXPECT_TRUE(NotesMention(idle.breakdown, "no device work"));
  AnalysisRows overlap = CommCompOverlap(g);
  ASSERT_EQ(overlap.rows.size(), 1u);
  EXPECT_EQ(At(overlap, 0, "comp_comm_overlap_pctg").kind, Cell::Kind::kEmpty);
  EXPECT_TRUE(ComputeLaunchStats(g, {}, *trace).launches.rows.empty());
  EXPECT_TRUE(NotesMention(AnnotationBreakdown(g, *trace, {}), "gpu_user_annotation"));
}

std::string Annotation(const std::string& cat, const std::string& name, double ts, double dur) {
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name +
         R"(", "pid": 1, "tid": 1, "ts": )" + std::to_string(ts) + R"(, "dur": )" +
         std::to_string(dur) + "}";
}

std::vector<std::string> NamesOf(const AnalysisRows& rows) {
  std::vector<std::string> names;
  for (size_t r = 0; r < rows.rows.size(); ++r) names.push_back(At(rows, r, "name").text);
  return names;
}

// CPU ranges of 100, 50, 10 and 5 µs; with one name allowed, the 0.8 quantile of the running
// total (160 + 0.4 * 5 = 162) and the limit send all but the first to "others", unless
// allowlisted.
TEST(GpuAnalyses, AnnotationBreakdownAllowlistAndCpuRanges) {
  auto trace = MustImport(TraceOf({Annotation("user_annotation", "big", 0, 100),
                                   Annotation("user_annotation", "mid", 200, 50),
                                   Annotation("user_annotation", "nccl:small", 300, 10),
                                   Annotation("user_annotation", "tiny", 400, 5),
                                   Annotation("gpu_user_annotation", "on_gpu", 500, 7)}));
  GpuEvents g = BuildGpuEvents(*trace);
  AnalysisRows gpu = AnnotationBreakdown(g, *trace, {});
  EXPECT_EQ(NamesOf(gpu), std::vector<std::string>{"on_gpu"});
  EXPECT_EQ(IntAt(gpu, 0, "sum"), 7);

  AnnotationBreakdownOptions options;
  options.use_gpu_annotation = false;
  options.num_annotations = 1;
  AnalysisRows plain = AnnotationBreakdown(g, *trace, options);
  EXPECT_EQ(NamesOf(plain), (std::vector<std::string>{"big", "others"}));
  EXPECT_EQ(IntAt(plain, 1, "sum"), 65);

  options.allowlist_patterns = std::vector<std::string>{"ccl:", "absent"};
  AnalysisRows allowed = AnnotationBreakdown(g, *trace, options);
  EXPECT_EQ(NamesOf(allowed), (std::vector<std::string>{"big", "nccl:small", "others"}));
  EXPECT_EQ(IntAt(allowed, 1, "sum"), 10);
  EXPECT_EQ(IntAt(allowed, 2, "sum"), 55);

  // Patterns are literal texts, as HTA escapes them: "." matches only a dot.
  options.allowlist_patterns = std::vector<std::string>{"."};
  EXPECT_EQ(NamesOf(AnnotationBreakdown(g, *trace, options)),
            (std::vector<std::string>{"big", "others"}));
  // An empty list is HTA's empty pattern, which matches every name.
  options.allowlist_patterns = std::vector<std::string>{};
  EXPECT_EQ(NamesOf(AnnotationBreakdown(g, *trace, options)),
            (std::vector<std::string>{"big", "mid", "nccl:small", "tiny"}));

  auto no_cpu = MustImport(TraceOf({Annotation("gpu_user_annotation", "on_gpu", 500, 7)}));
  GpuEvents none = BuildGpuEvents(*no_cpu);
  AnalysisRows empty = AnnotationBreakdown(none, *no_cpu, options);
  EXPECT_TRUE(empty.rows.empty());
  EXPECT_TRUE(NotesMention(empty, "no user_annotation"));
}

TEST(GpuAnalyses, RankComesFromDistributedInfo) {
  auto trace = MustImport(TraceOf({Runtime("cudaLaunchKernel", 50, 5, 1), Kernel("k", 60, 10, 1)},
                                  R"("distributedInfo": {"backend": "nccl", "rank": 3}, )"));
  GpuEvents g = BuildGpuEvents(*trace);
  EXPECT_EQ(g.rank, 3);
  EXPECT_EQ(IntAt(TemporalBreakdown(g, false), 0, "rank"), 3);
  EXPECT_EQ(IntAt(ComputeIdleTimeBreakdown(g, {}).breakdown, 0, "rank"), 3);
}

TEST(GpuAnalyses, TwoDevicesGetARowEach) {
  auto trace =
      MustImport(TraceOf({Runtime("cudaLaunchKernel", 50, 5, 1), Kernel("k", 60, 10, 1),
                          Runtime("cudaLaunchKernel", 51, 5, 2), Kernel("k", 100, 40, 2, 7, 1),
                          Runtime("cudaLaunchKernel", 52, 5, 3), Kernel("k", 150, 10, 3, 7, 1)}));
  GpuEvents g = BuildGpuEvents(*trace);
  AnalysisRows rows = TemporalBreakdown(g, false);
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(IntAt(rows, 0, "device"), 0);
  EXPECT_EQ(IntAt(rows, 0, "kernel_time"), 10);
  EXPECT_EQ(IntAt(rows, 1, "device"), 1);
  EXPECT_EQ(IntAt(rows, 1, "kernel_time"), 60);
  EXPECT_EQ(IntAt(rows, 1, "idle_time"), 10);
  // Stream 7 of device 0 and stream 7 of device 1 are different queues.
  IdleTimeBreakdown idle = ComputeIdleTimeBreakdown(g, {});
  ASSERT_EQ(idle.breakdown.columns[1], "device");
  int64_t device1_idle = 0;
  for (size_t r = 0; r < idle.breakdown.rows.size(); ++r)
    if (idle.breakdown.rows.cell(r, 1).int_value == 1)
      device1_idle += idle.breakdown.rows.cell(r, 4).int_value;
  EXPECT_EQ(device1_idle, 10);
}

TEST(GpuAnalyses, TimestampsRoundAsHtaDoes) {
  // 1712195495506240.028 is 1712195495506240.0 as a double: HTA's rounding keeps the start and
  // takes the end (240.0 + 4.95 = 244.95, 245 as a double) up; exact rounding does not.
  auto trace = MustImport(
      R"json({"traceEvents": [
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1,
       "ts": 1712195495506240.028, "dur": 4.950, "args": {"correlation": 9}},
      {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0,
       "tid": 7, "ts": 1712195495506247.208, "dur": 1.280,
       "args": {"device": 0, "stream": 7, "correlation": 9}}]})json");
  LaunchStats hta = ComputeLaunchStats(BuildGpuEvents(*trace), {}, *trace);
  ASSERT_EQ(hta.launches.rows.size(), 1u);
  EXPECT_EQ(IntAt(hta.launches, 0, "cpu_duration"), 5);
  GpuEventOptions exact;
  exact.exact_rounding = true;
  LaunchStats precise = ComputeLaunchStats(BuildGpuEvents(*trace, exact), {}, *trace);
  EXPECT_EQ(IntAt(precise.launches, 0, "cpu_duration"), 3);  // [241, 244]
  EXPECT_EQ(IntAt(precise.launches, 0, "launch_delay"), 4);  // 248 - 244
}

TEST(GpuAnalyses, LaunchStatsViews) {
  auto trace = MustImport(TraceOf({Runtime("cudaLaunchKernel", 0, 60, 1), Kernel("k", 70, 5, 1),
                                   Runtime("cudaLaunchKernel", 100, 10, 2), Kernel("k", 300, 5, 2),
                                   Runtime("cudaLaunchKernel", 120, 10, 3), Kernel("k", 125, 20, 3),
                                   Runtime("cudaFree", 130, 1, 4)}));
  LaunchStats s = ComputeLaunchStats(BuildGpuEvents(*trace), {}, *trace);
  ASSERT_EQ(s.launches.rows.size(), 3u);
  EXPECT_EQ(IntAt(s.launches, 0, "launch_delay"), 10);
  EXPECT_EQ(IntAt(s.launches, 1, "launch_delay"), 190);
  EXPECT_EQ(IntAt(s.launches, 2, "launch_delay"), 0);  // negative delays are clipped
  ASSERT_EQ(s.long_launches.size(), 1u);
  EXPECT_EQ(IntAt(s.launches.Select(s.long_launches), 0, "correlation"), 1);
  ASSERT_EQ(s.long_delays.size(), 1u);
  EXPECT_EQ(IntAt(s.launches.Select(s.long_delays), 0, "correlation"), 2);
  ASSERT_EQ(s.short_kernels.size(), 1u);  // gpu 5 < cpu 10 <= 50
  EXPECT_EQ(IntAt(s.launches.Select(s.short_kernels), 0, "correlation"), 2);
}

TEST(GpuAnalyses, AtenOpLaunchDelays) {
  auto op = [](double ts, double dur) {
    return R"({"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": )" +
           std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) + "}";
  };
  // Two addmm calls launching gemm then bias; a third launching only gemm.
  auto trace = MustImport(
      TraceOf({op(0, 50), Runtime("cudaLaunchKernel", 4, 2, 1), Kernel("gemm", 20, 5, 1),
               Runtime("cudaLaunchKernel", 10, 2, 2), Kernel("bias", 30, 5, 2), op(100, 50),
               Runtime("cudaLaunchKernel", 106, 2, 3), Kernel("gemm", 120, 5, 3),
               Runtime("cudaLaunchKernel", 110, 2, 4), Kernel("bias", 130, 5, 4), op(200, 50),
               Runtime("cudaLaunchKernel", 210, 2, 5), Kernel("gemm", 215, 5, 5)}));
  LaunchStats s = ComputeLaunchStats(BuildGpuEvents(*trace), {}, *trace);
  const AnalysisRows& d = s.aten_op_delays;
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(At(d, 0, "kernel_sequence").text, "gemm -> bias");
  EXPECT_EQ(IntAt(d, 0, "occurrence_count"), 2);
  EXPECT_DOUBLE_EQ(DoubleAt(d, 0, "avg_aten_op_launch_delay"), 5.0);  // (4 + 6) / 2
  EXPECT_DOUBLE_EQ(DoubleAt(d, 0, "avg_runtime_delay"), 15.0);        // (16 + 14) / 2
  EXPECT_EQ(At(d, 1, "kernel_sequence").text, "gemm");
  EXPECT_DOUBLE_EQ(DoubleAt(d, 1, "avg_runtime_delay"), 5.0);
}

TEST(GpuAnalyses, OthersKeepTheirOwnFigures) {
  std::vector<std::string> events;
  // Twelve kernels: k00 takes most of the time; the last ones become "others".
  for (int i = 0; i < 12; ++i) {
    std::string name = "k" + std::string(i < 10 ? "0" : "") + std::to_string(i);
    int64_t dur = i == 0 ? 1000 : 12 - i;
    events.push_back(Runtime("cudaLaunchKernel", 10 * i, 1, 2 * i + 1));
    events.push_back(Kernel(name, 2000 + 2000 * i, dur, 2 * i + 1));
    events.push_back(Runtime("cudaLaunchKernel", 10 * i + 5, 1, 2 * i + 2));
    events.push_back(Kernel(name, 3000 + 2000 * i, dur + 2, 2 * i + 2));
  }
  auto trace = MustImport(TraceOf(events));
  KernelBreakdown b = ComputeKernelBreakdown(BuildGpuEvents(*trace), {}, *trace);
  int64_t total = 0;
  bool saw_others = false;
  for (size_t r = 0; r < b.by_kernel.rows.size(); ++r) {
    total += IntAt(b.by_kernel, r, "sum");
    if (At(b.by_kernel, r, "name").text == "k00") {
      EXPECT_EQ(IntAt(b.by_kernel, r, "max"), 1002);  // HTA would print the sum, 2002
      EXPECT_EQ(IntAt(b.by_kernel, r, "min"), 1000);
      EXPECT_DOUBLE_EQ(DoubleAt(b.by_kernel, r, "mean"), 1001);
    }
    if (At(b.by_kernel, r, "name").text == "others") saw_others = true;
  }
  EXPECT_TRUE(saw_others);
  int64_t expected = 0;
  for (int i = 0; i < 12; ++i) expected += 2 * (i == 0 ? 1000 : 12 - i) + 2;
  EXPECT_EQ(total, expected);
}

TEST(GpuAnalyses, KernelTypesFollowHtaPatterns) {
  EXPECT_EQ(ClassifyKernel("ncclKernel_AllReduce"), KernelType::kCommunication);
  EXPECT_EQ(ClassifyKernel("void ncclKernel_x"), KernelType::kCommunication);
  EXPECT_EQ(ClassifyKernel("Memcpy HtoD"), KernelType::kMemory);
  EXPECT_EQ(ClassifyKernel("Memset (Device)"), KernelType::kMemory);
  EXPECT_EQ(ClassifyKernel("Stream Sync"), KernelType::kOther);
  EXPECT_EQ(ClassifyKernel("hipMemcpy"), KernelType::kCommunication);  // HTA's "^hip" rule
  EXPECT_EQ(ClassifyKernel("void at::native::elementwise_kernel"), KernelType::kComputation);
}

// ClassifyKernel spells HTA's regexes out by hand: it must agree with them (as std::regex runs
// them, `.` stopping at a line end) on every name built from their pieces.
TEST(GpuAnalyses, KernelTypesEqualTheRegexesTheyReplace) {
  const std::regex communication("(nccl.*)|(hip)|(hccl)|(.*ncclKernel.*)");
  const std::regex memory("((hip)?Memcpy)|((hip)?Memset)|(dma)");
  const std::regex not_compute(
      "(nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(.*Sync)|(Stream Wait Event)|(cuda.*LaunchKernel)|"
      "(runFunction)|(hip)|(job_exe)|(packet)|(pe_exe)|(cpum_exe_subgraph)|(hccl)|"
      "(collective_subgraph_execution)");
  auto by_regex = [&](const std::string& name) {
    auto at_start = [&](const std::regex& r) {
      return std::regex_search(name, r, std::regex_constants::match_continuous);
    };
    if (at_start(communication)) return KernelType::kCommunication;
    if (at_start(memory)) return KernelType::kMemory;
    return at_start(not_compute) ? KernelType::kOther : KernelType::kComputation;
  };
  const std::vector<std::string> pieces = {"",
                                           "nccl",
                                           "ncclKernel",
                                           "hip",
                                           "hccl",
                                           "Memcpy",
                                           "Memset",
                                           "dma",
                                           "Sync",
                                           "cuda",
                                           "LaunchKernel",
                                           "Stream Wait Event",
                                           "runFunction",
                                           "job_exe",
                                           "packet",
                                           "pe_exe",
                                           "cpum_exe_subgraph",
                                           "collective_subgraph_execution",
                                           "x",
                                           "\n",
                                           "\r",
                                           "void "};
  int checked = 0;
  for (const std::string& a : pieces) {
    for (const std::string& b : pieces) {
      for (const std::string& c : {std::string(), std::string("\n"), std::string("Sync")}) {
        const std::string name = a + b + c;
        EXPECT_EQ(ClassifyKernel(name), by_regex(name)) << "name: " << name;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 22 * 22 * 3);
}

// std::regex recursed once per character of a name under `.*`: a kernel name of 40 000
// characters overflowed the stack (tests/fuzz/crashes/trace_reader keeps such a trace).
TEST(GpuAnalyses, KernelTypesOfVeryLongNames) {
  const std::string long_name(size_t{1} << 20, 'a');
  EXPECT_EQ(ClassifyKernel(long_name + "ncclKernel"), KernelType::kCommunication);
  EXPECT_EQ(ClassifyKernel(long_name + "Sync"), KernelType::kOther);
  EXPECT_EQ(ClassifyKernel(long_name), KernelType::kComputation);
}

// An MTIA trace: device work in mtia_ccp_events, launched from mtia_runtime calls. Its device
// time used to show as 0 in key_averages; the columns are named after the device.
TEST(GpuAnalyses, MtiaDeviceTimeCountsAndNamesTheColumns) {
  auto trace = MustImport(TraceOf(
      {R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0,
           "dur": 50, "args": {"External id": 5}})",
       R"({"ph": "X", "cat": "mtia_runtime", "name": "runFunction - job_prep_and_submit_for_execution",
           "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"External id": 5, "correlation": 77}})",
       Kernel("mtia_gemm", 20, 40, 77, 3, 0, "mtia_ccp_events")}));
  auto events = BuildFunctionEvents(*trace);
  EXPECT_EQ(events->device_name, "MTIA");
  KeyAverages avg =
      ComputeKeyAverages(std::shared_ptr<const FunctionEvents>(std::move(events)), false, 0);
  int64_t device_ns = 0;
  for (const auto& row : avg.rows) device_ns += row.self_cuda_time_total_ns;
  EXPECT_EQ(device_ns, 2 * 40000);  // the op's self device time, and the kernel's own row
  auto table = BuildAveragesTable(avg, {});
  ASSERT_TRUE(table.ok());
  EXPECT_NE(table.value().find("Self MTIA %"), std::string::npos);
  EXPECT_NE(table.value().find("Self MTIA time total: 40.000us"), std::string::npos);
  EXPECT_EQ(table.value().find("CUDA"), std::string::npos);
  // The HTA analyses see the same device work.
  GpuEvents g = BuildGpuEvents(*trace);
  EXPECT_EQ(IntAt(TemporalBreakdown(g, false), 0, "kernel_time"), 40);
}

TEST(GpuAnalyses, QueueLengthAndCounters) {
  auto trace = MustImport(
      TraceOf({Runtime("cudaLaunchKernel", 0, 1, 1), Runtime("cudaLaunchKernel", 1, 1, 2),
               Runtime("cudaMemcpyAsync", 2, 1, 3), Kernel("k", 10, 5, 1), Kernel("k", 20, 5, 2),
               R"json({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)",
           "pid": 0, "tid": 7, "ts": 30, "dur": 4, "args": {"device": 0, "stream": 7,
           "correlation": 3, "memory bandwidth (GB/s)": 2.5}})json",
               Runtime("cudaFree", 3, 1, 4)}));
  GpuEvents g = BuildGpuEvents(*trace);
  AnalysisRows q = QueueLengthSummary(g, *trace);
  ASSERT_EQ(q.rows.size(), 1u);
  EXPECT_EQ(IntAt(q, 0, "count"), 6);  // 1 2 3 2 1 0
  EXPECT_DOUBLE_EQ(DoubleAt(q, 0, "mean"), 1.5);
  EXPECT_EQ(IntAt(q, 0, "max"), 3);
  EXPECT_DOUBLE_EQ(DoubleAt(q, 0, "time_weighted_mean"), 1.9);  // (1 + 2 + 3*8 + 2*10 + 10) / 30
  AnalysisRows c = CounterSeries(g, *trace);
  ASSERT_EQ(c.rows.size(), 8u);  // six queue points, the copy's start and end
  EXPECT_EQ(At(c, 6, "name").text, "memory_bandwidth Memcpy HtoD (GB/s)");
  EXPECT_DOUBLE_EQ(DoubleAt(c, 6, "value"), 2.5);
  EXPECT_EQ(IntAt(c, 7, "ts"), 34);
  EXPECT_DOUBLE_EQ(DoubleAt(c, 7, "value"), 0.0);
}

TEST(GpuAnalyses, RowsFormatAsTableAndCsv) {
  AnalysisRows rows;
  rows.columns = {"name", "sum"};
  rows.rows.push_back({Cell::Text("a, \"b\""), Cell::Int(12)});
  rows.rows.push_back({Cell::Text("c"), Cell::Double(0.5)});
  rows.notes.push_back("n");
  EXPECT_EQ(rows.FormatCsv(), "name,sum\n\"a, \"\"b\"\"\",12\nc,0.5\n");
  EXPECT_EQ(rows.FormatTable(), "name    sum\na, \"b\"   12\nc       0.5\nnote: n\n");
}

TEST(GpuAnalyses, RowListKeepsEveryKindOfCell) {
  RowList list;
  list.push_back({Cell::Text("first"), Cell::Int(-3), Cell::Fixed(2.5, 1), Cell::Empty()});
  list.push_back({Cell::Text(""), Cell::Double(0.25), Cell::Text("x\ny"), Cell::Int(7)});
  list.push_back({Cell::Text("third"), Cell::Int(1), Cell::Int(2), Cell::Int(3)});
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list.cell(0, 0).text, "first");
  EXPECT_EQ(list.cell(0, 1).int_value, -3);
  EXPECT_EQ(list.cell(0, 2).Format(), "2.5");
  EXPECT_EQ(list.cell(0, 2).decimals, 1);
  EXPECT_EQ(list.cell(0, 3).kind, Cell::Kind::kEmpty);
  EXPECT_EQ(list.cell(1, 0).kind, Cell::Kind::kText);
  EXPECT_EQ(list.cell(1, 0).text, "");
  EXPECT_DOUBLE_EQ(list.cell(1, 1).double_value, 0.25);
  EXPECT_EQ(list.text(1, 2), "x\ny");
  EXPECT_EQ(list.text(1, 3), "");  // not a text cell
  EXPECT_THROW(list.push_back({Cell::Int(1)}), std::logic_error);
  EXPECT_THROW(list.at(3), std::out_of_range);

  list.Reorder({2, 0, 1});
  EXPECT_EQ(list.text(0, 0), "third");
  EXPECT_EQ(list.text(1, 0), "first");
  EXPECT_EQ(list.text(2, 2), "x\ny");

  // Past one block of cells (65536), rows straddle blocks; the blocks of rows already read go.
  RowList many;
  for (int64_t i = 0; i < 50000; ++i)
    many.push_back({Cell::Int(i), Cell::Text(std::to_string(i)), Cell::Double(0.5 * i)});
  ASSERT_EQ(many.size(), 50000u);
  EXPECT_EQ(many.cell(21845, 1).text, "21845");  // cells 65535..65537: two blocks
  EXPECT_EQ(many.cell(21845, 2).double_value, 0.5 * 21845);
  many.ReleaseBefore(30000);
  EXPECT_EQ(many.size(), 50000u);
  EXPECT_EQ(many.cell(30000, 0).int_value, 30000);
  EXPECT_EQ(many.text(49999, 1), "49999");

  AnalysisRows rows;
  rows.columns = {"a", "b", "c", "d"};
  rows.rows = list;
  rows.notes = {"kept"};
  AnalysisRows some = rows.Select({2, 0});
  ASSERT_EQ(some.rows.size(), 2u);
  EXPECT_EQ(some.rows.text(0, 2), "x\ny");
  EXPECT_EQ(some.rows.text(1, 0), "third");
  EXPECT_EQ(some.notes, std::vector<std::string>{"kept"});
}

}  // namespace
}  // namespace profsh
