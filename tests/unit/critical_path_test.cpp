// t:critical_path's graph on small traces with a known answer: a stream synchronization, a graph
// launch (whose kernels HTA loses), a what-if that removes the only bottleneck, a trace without
// synchronization events (a note, no error), and the window's errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/analysis/critical_path/critical_path.h"
#include "test_util.h"

namespace profsh {
namespace {

using testing::MustImport;

std::string Event(const std::string& cat, const std::string& name, int pid, int tid, int64_t ts,
                  int64_t dur, const std::string& args = "") {
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name + R"(", "pid": )" +
         std::to_string(pid) + R"(, "tid": )" + std::to_string(tid) + R"(, "ts": )" +
         std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) +
         (args.empty() ? "" : R"(, "args": {)" + args + "}") + "}";
}
std::string Runtime(const std::string& name, int64_t ts, int64_t dur, int corr) {
  return Event("cuda_runtime", name, 1, 1, ts, dur, R"("correlation": )" + std::to_string(corr));
}
std::string Kernel(const std::string& name, int64_t ts, int64_t dur, int corr) {
  return Event("kernel", name, 0, 7, ts, dur,
               R"("device": 0, "stream": 7, "correlation": )" + std::to_string(corr));
}
std::string StreamSync(int64_t ts, int64_t dur, int corr) {
  return Event("cuda_sync", "Stream Sync", 0, 7, ts, dur,
               R"("device": 0, "stream": 7, "correlation": )" + std::to_string(corr));
}
std::string TraceOf(const std::vector<std::string>& events) {
  std::string json = R"({"traceEvents": [)";
  for (size_t i = 0; i < events.size(); ++i) json += (i ? ", " : "") + events[i];
  return json + "]}";
}

// aten::add launches k1 (100 µs); cudaStreamSynchronize waits for it; then aten::mul.
std::vector<std::string> SyncedStep(bool with_sync_record) {
  std::vector<std::string> events = {
      Event("cpu_op", "aten::add", 1, 1, 0, 20), Runtime("cudaLaunchKernel", 5, 5, 1),
      Runtime("cudaStreamSynchronize", 30, 100, 2), Event("cpu_op", "aten::mul", 1, 1, 140, 10),
      Kernel("k1", 15, 100, 1)};
  if (with_sync_record) events.push_back(StreamSync(30, 100, 2));
  return events;
}

CriticalPath Analyze(const Trace& trace, CriticalPathOptions options = {}) {
  options.annotation = "";
  auto cp = AnalyzeCriticalPath(trace, options);
  if (!cp.ok()) throw std::runtime_error(cp.error().message);
  return std::move(cp.value());
}

// The path as "name:type" per edge (the attributed event's name, "-" for none).
std::vector<std::string> PathEdges(const Trace& trace, const CriticalPath& cp, const CpPath& p) {
  std::vector<std::string> out;
  for (uint32_t e : p.edges) {
    const uint32_t ev = cp.graph.edge_event[e];
    out.push_back(
        (ev == kCpNoEvent ? std::string("-") : std::string(trace.str(trace.events.name(ev)))) +
        ":" + std::string(CpEdgeTypeName(cp.graph.edge_type[e])).substr(14));
  }
  return out;
}

TEST(CriticalPath, SyncEdgeCarriesThePathThroughTheKernel) {
  auto trace = MustImport(TraceOf(SyncedStep(true)));
  const CriticalPath cp = Analyze(*trace);
  EXPECT_EQ(cp.path.length_ns, 125'000);
  EXPECT_EQ(PathEdges(*trace, cp, cp.path),
            (std::vector<std::string>{"aten::add:operator", "-:kernel_launch_delay", "k1:operator",
                                      "-:sync_dependency", "-:dependency", "aten::mul:operator"}));
  EXPECT_TRUE(cp.notes.empty());
  const AnalysisRows summary = CriticalPathSummary(cp, cp.path);
  ASSERT_EQ(summary.rows.size(), 4u);
  EXPECT_EQ(summary.rows[0][0].text, "");
  EXPECT_EQ(summary.rows[1][0].text, "cpu_bound");
  EXPECT_DOUBLE_EQ(summary.rows[1][1].double_value, 12.0);
  EXPECT_EQ(summary.rows[2][0].text, "gpu_compute_bound");
  EXPECT_DOUBLE_EQ(summary.rows[2][1].double_value, 80.0);
  EXPECT_EQ(summary.rows[3][0].text, "gpu_kernel_launch_overhead");
  EXPECT_DOUBLE_EQ(summary.rows[3][1].double_value, 8.0);
  const AnalysisRows breakdown = CriticalPathBreakdown(*trace, cp, cp.path);
  EXPECT_EQ(breakdown.rows.size(), cp.path.edges.size());
}

TEST(CriticalPath, WithoutSyncEventsANoteAndThePathItCanGive) {
  auto trace = MustImport(TraceOf(SyncedStep(false)));
  const CriticalPath cp = Analyze(*trace);
  // Nothing ties k1's end to the CPU: the path ends with the kernel.
  EXPECT_EQ(cp.path.length_ns, 115'000);
  ASSERT_EQ(cp.notes.size(), 1u);
  EXPECT_NE(cp.notes[0].find("no CUDA synchronization events"), std::string::npos);
  EXPECT_NE(cp.notes[0].find("profsh run"), std::string::npos);
  EXPECT_NE(cp.notes[0].find("enable_cuda_sync_events"), std::string::npos);
}

TEST(CriticalPath, WhatIfRemovingTheOnlyBottleneckShowsTheNext) {
  auto trace = MustImport(TraceOf(SyncedStep(true)));
  const CriticalPath cp = Analyze(*trace);
  std::vector<int64_t> weights = cp.graph.edge_weight;
  bool found = false;
  for (uint32_t e : cp.path.edges) {
    if (cp.graph.edge_bound[e] == CpBound::kGpuCompute) {
      weights[e] = 0;  // k1 made infinitely fast
      found = true;
    }
  }
  ASSERT_TRUE(found);
  auto next = LongestPath(cp.graph, weights);
  ASSERT_TRUE(next.ok());
  // The CPU now bounds the step: add (20) then the (waiting, zero-weight) sync, then mul (10).
  EXPECT_EQ(next->length_ns, 30'000);
  EXPECT_EQ(
      PathEdges(*trace, cp, *next),
      (std::vector<std::string>{
          "aten::add:operator", "cudaLaunchKernel:operator", "aten::add:operator", "-:dependency",
          "cudaStreamSynchronize:operator", "-:dependency", "aten::mul:operator"}));
}

TEST(CriticalPath, EventWaitsWithoutTheirRecordAreNoted) {
  // An Event Sync that names no cudaEventRecord (as profsh's CUPTI recording writes them).
  std::vector<std::string> events = SyncedStep(true);
  events.push_back(Runtime("cudaEventSynchronize", 135, 2, 3));
  events.push_back(Event("cuda_sync", "Event Sync", 0, -1, 135, 2,
                         R"("device": 0, "stream": -1, "correlation": 3)"));
  auto trace = MustImport(TraceOf(events));
  const CriticalPath cp = Analyze(*trace);
  EXPECT_EQ(cp.path.length_ns, 125'000);
  ASSERT_EQ(cp.notes.size(), 1u);
  EXPECT_EQ(cp.notes[0].rfind("1 Event Sync or Stream Wait Event record(s)", 0), 0u);
}

TEST(CriticalPath, GraphLaunchKernelsHangOffTheLaunch) {
  // One cudaGraphLaunch runs three kernels (one correlation); the CPU waits for them.
  auto trace = MustImport(
      TraceOf({Event("cpu_op", "replay", 1, 1, 0, 20), Runtime("cudaGraphLaunch", 5, 5, 10),
               Runtime("cudaStreamSynchronize", 25, 90, 11), Kernel("g1", 12, 30, 10),
               Kernel("g2", 44, 30, 10), Kernel("g3", 76, 30, 10), StreamSync(25, 90, 11)}));
  const CriticalPath cp = Analyze(*trace);
  // replay (5) + launch delay (7) + 3 kernels (90) + 2 gaps (4) = 106; the zero-weight sync
  // edge after g3 adds nothing, and networkx ends the path at the first node of that length.
  EXPECT_EQ(cp.path.length_ns, 106'000);
  EXPECT_EQ(PathEdges(*trace, cp, cp.path),
            (std::vector<std::string>{"replay:operator", "-:kernel_launch_delay", "g1:operator",
                                      "g1:kernel_kernel_delay", "g2:operator",
                                      "g2:kernel_kernel_delay", "g3:operator"}));
  // Every kernel of the launch is reachable from it: the later ones by zero-weight edges.
  int launch_edges = 0;
  for (size_t e = 0; e < cp.graph.edge_count(); ++e)
    if (cp.graph.edge_type[e] == CpEdgeType::kKernelLaunchDelay) ++launch_edges;
  EXPECT_EQ(launch_edges, 3);
}

TEST(CriticalPath, WindowOfAnAnnotationsInstances) {
  auto trace =
      MustImport(TraceOf({Event("user_annotation", "ProfilerStep#1", 1, 1, 0, 50),
                          Event("user_annotation", "ProfilerStep#2", 1, 1, 50, 50),
                          Event("cpu_op", "a", 1, 1, 10, 30), Event("cpu_op", "b", 1, 1, 60, 20)}));
  CriticalPathOptions options;
  auto one = AnalyzeCriticalPath(*trace, options);
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->path.length_ns, 30'000);
  options.first_instance = 0;
  options.last_instance = 1;
  auto both = AnalyzeCriticalPath(*trace, options);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->path.length_ns, 50'000);  // a, then b (the gap between them is no edge's)
  options.first_instance = options.last_instance = 2;
  auto missing = AnalyzeCriticalPath(*trace, options);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("has 2 instance(s)"), std::string::npos);
  options.annotation = "NoSuchStep";
  EXPECT_FALSE(AnalyzeCriticalPath(*trace, options).ok());
}

TEST(CriticalPath, OneRankOfAMultiRankTrace) {
  auto labels = [](int pid, int rank) {
    return R"({"ph": "M", "name": "process_labels", "pid": )" + std::to_string(pid) +
           R"(, "args": {"labels": "rank )" + std::to_string(rank) + R"("}})";
  };
  auto trace =
      MustImport(TraceOf({labels(10, 0), labels(11, 1), Event("cpu_op", "short", 10, 1, 0, 20),
                          Event("cpu_op", "long", 11, 1, 0, 70)}));
  CriticalPathOptions options;
  options.annotation = "";
  options.rank = 1;
  auto one = AnalyzeCriticalPath(*trace, options);
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->path.length_ns, 70'000);
  EXPECT_EQ(one->rank, 1);
  options.rank.reset();
  auto first = AnalyzeCriticalPath(*trace, options);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->path.length_ns, 20'000);
  ASSERT_EQ(first->notes.size(), 1u);
  EXPECT_NE(first->notes[0].find("2 ranks; this is rank 0"), std::string::npos);
  options.rank = 5;
  auto missing = AnalyzeCriticalPath(*trace, options);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "critical_path: the trace has no rank 5");
}

}  // namespace
}  // namespace profsh
