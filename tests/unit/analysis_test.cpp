#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include "engine/analysis/averages_table.h"
#include "engine/analysis/function_events.h"
#include "engine/analysis/key_averages.h"
#include "engine/analysis/memory_timeline.h"
#include "engine/exporters/exporter.h"
#include "engine/load/trace_loader.h"
#include "engine/util/parallel.h"
#include "tests/unit/test_util.h"

namespace profsh {
namespace {

struct Row {
  int64_t count, cpu_total, self_cpu, cuda_total, self_cuda, cpu_mem, self_cpu_mem;
};

std::map<std::string, Row> Rows(const std::string& json, bool by_shape = false) {
  auto trace = testing::MustImport(json);
  std::shared_ptr<const FunctionEvents> fe = BuildFunctionEvents(*trace);
  KeyAverages avg = ComputeKeyAverages(fe, by_shape, 0);
  std::map<std::string, Row> out;
  for (const AverageRow& r : avg.rows) {
    std::string key(fe->strings.Get(r.key));
    if (r.device == DeviceType::kCuda) key = "cuda:" + key;
    out[key] = Row{r.count,
                   r.cpu_time_total_ns / 1000,
                   r.self_cpu_time_total_ns / 1000,
                   r.cuda_time_total_ns / 1000,
                   r.self_cuda_time_total_ns / 1000,
                   r.cpu_memory_usage,
                   r.self_cpu_memory_usage};
  }
  return out;
}

std::string X(const std::string& name, int64_t ts, int64_t dur, int tid = 1,
              const std::string& args = "{}", const std::string& cat = "cpu_op") {
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name + R"(", "pid": 1, "tid": )" +
         std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" +
         std::to_string(dur) + R"(, "args": )" + args + "}";
}

std::string Mem(int64_t ts, int64_t bytes, int tid = 1) {
  return R"({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": )" +
         std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) + R"(, "args": {"Bytes": )" +
         std::to_string(bytes) + R"(, "Device Type": 0}})";
}

std::string Trace(std::initializer_list<std::string> events, const std::string& extra = "") {
  std::string s = "{" + extra + "\"traceEvents\": [";
  bool first = true;
  for (const auto& e : events) {
    if (!first) s += ",\n";
    first = false;
    s += e;
  }
  return s + "]}";
}

TEST(FunctionEvents, SelfTimeSubtractsDirectChildrenPerThread) {
  auto rows = Rows(Trace({X("outer", 0, 100), X("a", 10, 20), X("b", 40, 30), X("b", 45, 10, 2),
                          X("partial", 90, 20)}));
  EXPECT_EQ(rows["outer"].self_cpu, 50);  // 100 - 20 - 30; 'partial' sticks out so is no child
  EXPECT_EQ(rows["outer"].cpu_total, 100);
  EXPECT_EQ(rows["b"].count, 2);
  EXPECT_EQ(rows["b"].self_cpu, 40);  // the tid 2 one is not a child of the tid 1 one
  EXPECT_EQ(rows["partial"].self_cpu, 20);
}

TEST(FunctionEvents, LoneChildWithParentsNameMerges) {
  auto rows =
      Rows(Trace({X("aten::to", 0, 100), X("aten::to", 10, 50), X("aten::copy_", 20, 10),
                  X("aten::add", 200, 10), X("aten::add", 201, 2), X("aten::mul", 205, 2)}));
  EXPECT_EQ(rows["aten::to"].count, 1);  // merged
  EXPECT_EQ(rows["aten::to"].self_cpu, 90);
  EXPECT_EQ(rows["aten::add"].count, 2);  // two children: no merge
}

// torch's _remove_dup_nodes, literally: passes over the events until one deletes nothing, each
// lone same-name child handing its children to its parent. Returns (name, self time) per
// remaining event.
std::multiset<std::pair<std::string, int64_t>> TorchMerged(
    const std::vector<std::tuple<std::string, int64_t, int64_t>>& ranges) {
  struct Node {
    std::string name;
    int64_t start, end;
    int parent = -1;
    std::vector<int> children;
  };
  std::vector<Node> nodes;
  for (const auto& [name, start, dur] : ranges) nodes.push_back({name, start, start + dur, -1, {}});
  std::vector<int> order(nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (nodes[a].start != nodes[b].start) return nodes[a].start < nodes[b].start;
    return nodes[a].end > nodes[b].end;
  });
  std::vector<int> open;
  for (int c : order) {
    while (!open.empty() &&
           (nodes[c].start >= nodes[open.back()].end || nodes[c].end > nodes[open.back()].end))
      open.pop_back();
    if (!open.empty()) {
      nodes[c].parent = open.back();
      nodes[open.back()].children.push_back(c);
    }
    open.push_back(c);
  }
  std::vector<int> events = order;
  while (true) {
    std::set<int> deleted;
    for (int e : events) {
      int p = nodes[e].parent;
      if (p >= 0 && nodes[p].name == nodes[e].name && nodes[p].children.size() == 1) {
        nodes[p].children = nodes[e].children;
        for (int ch : nodes[e].children) nodes[ch].parent = p;
        deleted.insert(e);
      }
    }
    if (deleted.empty()) break;
    std::vector<int> kept;
    for (int e : events) {
      if (!deleted.count(e)) kept.push_back(e);
    }
    events = kept;
  }
  std::multiset<std::pair<std::string, int64_t>> out;
  for (int e : events) {
    int64_t self = nodes[e].end - nodes[e].start;
    for (int ch : nodes[e].children) self -= nodes[ch].end - nodes[ch].start;
    out.insert({nodes[e].name, self});
  }
  return out;
}

TEST(FunctionEvents, MergingMatchesTorchsRepeatedPassesOnRandomTrees) {
  std::mt19937 rng(11);
  size_t merged = 0;
  for (int round = 0; round < 200; ++round) {
    // Random nested ranges with two names, so that chains of lone same-name children are common.
    std::vector<std::tuple<std::string, int64_t, int64_t>> ranges;
    std::function<void(int64_t, int64_t, int)> grow = [&](int64_t start, int64_t end, int depth) {
      int64_t at = start;
      while (at + 4 < end && ranges.size() < 60) {
        int64_t len = 2 + static_cast<int64_t>(rng() % static_cast<uint64_t>(end - at - 2));
        ranges.emplace_back(rng() % 2 ? "a" : "b", at, len);
        if (depth < 6 && len > 6) grow(at + 1, at + len - 1, depth + 1);
        at += len + static_cast<int64_t>(rng() % 3);
        if (rng() % 3 == 0) break;  // often a single child
      }
    };
    grow(0, 100000, 0);
    std::vector<std::string> json;
    for (const auto& [name, start, dur] : ranges) json.push_back(X(name, start, dur));
    std::string trace = "{\"traceEvents\": [";
    for (size_t i = 0; i < json.size(); ++i) trace += (i ? ",\n" : "") + json[i];
    trace += "]}";
    auto t = testing::MustImport(trace);
    auto fe = BuildFunctionEvents(*t);
    std::multiset<std::pair<std::string, int64_t>> got;
    for (size_t i = 0; i < fe->size(); ++i) {
      if (!fe->removed(i))
        got.insert({std::string(fe->strings.Get(fe->name(i))), fe->self_cpu_ns(i) / 1000});
    }
    ASSERT_EQ(got, TorchMerged(ranges)) << "round " << round << ": " << trace;
    merged += ranges.size() - got.size();
  }
  EXPECT_GT(merged, 1000u);  // chains of merges, not a few
}

// Everything the operator view and the averages hold, as text, to compare two computations.
std::string Everything(const class Trace& trace, bool by_shape) {
  std::shared_ptr<const FunctionEvents> fe = BuildFunctionEvents(trace);
  std::ostringstream out;
  for (size_t i = 0; i < fe->size(); ++i) {
    out << fe->strings.Get(fe->name(i)) << ' ' << fe->start_ns(i) << ' ' << fe->end_ns(i) << ' '
        << fe->removed(i) << ' ' << fe->parent(i) << ' ' << fe->self_cpu_ns(i) << ' '
        << fe->cuda_total_ns(i) << ' ' << fe->self_cuda_ns(i) << ' ' << fe->cpu_memory(i) << ' '
        << fe->self_cpu_memory(i) << ' ' << fe->stack(i) << '\n';
  }
  KeyAverages avg = ComputeKeyAverages(fe, by_shape, 0);
  TableOptions options;
  options.sort_by = "cpu_time_total";
  auto table = BuildAveragesTable(avg, options);
  out << (table.ok() ? table.value() : table.error().message);
  for (const AverageRow& r : avg.rows) out << fe->strings.Get(r.key) << ' ' << r.count << '\n';
  return out.str();
}

TEST(FunctionEvents, TwoPartLoopsGiveWhatOnePartGives) {
  // Real traces: GPU work linked both ways, memory records, stacks, many threads.
  const char* files[] = {
      "scripts/samples/alexnet_a100.pt.trace.json.gz",
      "scripts/samples/mlp_training_cpu.pt.trace.json.gz",
      "scripts/samples/resnet18_cpu.pt.trace.json.gz",
      "tests/data/kineto/critical_path_cuda_event_sync_multi_stream_event_sync_trace.json.gz"};
  for (const char* file : files) {
    auto trace = LoadTrace(std::string(PROFSH_SOURCE_DIR) + "/" + file);
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    const size_t saved = parallel_min_items.load();
    std::string one = Everything(*trace.value(), true);
    parallel_min_items = 1;  // every loop in two parts (on a machine with two cores)
    std::string two = Everything(*trace.value(), true);
    parallel_min_items = saved;
    EXPECT_GT(one.size(), 1000u) << file;
    EXPECT_EQ(one, two) << file;
  }
}

TEST(FunctionEvents, MemoryCountsInsideIntervalsInclusiveAndLoneRecordsBecomeRows) {
  auto rows = Rows(Trace(
      {X("outer", 10, 100), X("inner", 20, 10), Mem(20, 1000), Mem(30, 24), Mem(110, 5), Mem(5, 7)},
      R"("profile_memory": 1, )"));
  EXPECT_EQ(rows["inner"].cpu_mem, 1024);  // both ends of [20, 30] count
  EXPECT_EQ(rows["outer"].cpu_mem, 1029);
  EXPECT_EQ(rows["outer"].self_cpu_mem, 5);
  EXPECT_EQ(rows["[memory]"].count, 1);
  EXPECT_EQ(rows["[memory]"].cpu_mem, 7);
}

TEST(FunctionEvents, CollectedMemoryCountsForTheAllocatingThreadsRange) {
  const std::initializer_list<std::string> events = {
      X("main_op", 0, 100), X("worker_op", 40, 20, 2), Mem(50, 300, 2),
      Mem(60, 5, 2),    // in worker_op, on its thread
      Mem(70, 11, 3)};  // a thread with no range: torch's rule, by time
  auto by_thread = Rows(Trace(events, R"("profsh": {"memory_attribution": "thread"}, )"));
  EXPECT_EQ(by_thread["worker_op"].cpu_mem, 305);
  EXPECT_EQ(by_thread["main_op"].cpu_mem, 11);
  EXPECT_EQ(by_thread.count("[memory]"), 0u);
  auto by_time = Rows(Trace(events));  // torch's traces: every op open at the time
  EXPECT_EQ(by_time["worker_op"].cpu_mem, 305);
  EXPECT_EQ(by_time["main_op"].cpu_mem, 316);
}

TEST(MemoryTimeline, RunningTotalsInTimeOrderWithPeakAndBytesAtEnd) {
  auto trace = testing::MustImport(Trace({Mem(20, 1000), Mem(5, 7), Mem(30, -1000), Mem(25, 50, 2)},
                                         R"("profile_memory": 1, )"));
  MemoryTimeline m = BuildMemoryTimeline(*trace);
  ASSERT_EQ(m.points.size(), 4u);
  std::vector<int64_t> totals;
  for (const MemoryPoint& p : m.points) totals.push_back(p.total);
  EXPECT_EQ(totals, (std::vector<int64_t>{7, 1007, 1057, 57}));  // one process, both threads
  EXPECT_EQ(m.peak, 1057);
  EXPECT_EQ(m.at_end, 57);
  ASSERT_EQ(m.processes.size(), 1u);
  EXPECT_EQ(m.processes[0].peak_ts, m.points[2].ts);
}

TEST(MemoryTimeline, HostAndEachGpuAreCountedApart) {
  auto gpu = [](int64_t ts, int64_t bytes, int device) {
    return R"({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" +
           std::to_string(ts) + R"(, "args": {"Bytes": )" + std::to_string(bytes) +
           R"(, "Device Type": 1, "Device Id": )" + std::to_string(device) + "}}";
  };
  auto trace = testing::MustImport(Trace({Mem(10, 100), gpu(20, 4096, 0), Mem(30, 50),
                                          gpu(40, 512, 1), gpu(50, -4096, 0), Mem(60, -100)}));
  MemoryTimeline m = BuildMemoryTimeline(*trace);
  ASSERT_EQ(m.points.size(), 6u);
  std::vector<std::string> devices;
  std::vector<int64_t> totals;
  for (const MemoryPoint& p : m.points) {
    devices.push_back(m.devices[p.device]);
    totals.push_back(p.total);
  }
  EXPECT_EQ(devices, (std::vector<std::string>{"cpu", "cuda:0", "cpu", "cuda:1", "cuda:0", "cpu"}));
  EXPECT_EQ(totals, (std::vector<int64_t>{100, 4096, 150, 512, 0, 50}));
  EXPECT_EQ(m.peak, 150);  // host memory only
  EXPECT_EQ(m.at_end, 50);
  ASSERT_EQ(m.processes.size(), 3u);
  EXPECT_EQ(m.processes[1].device, "cuda:0");
  EXPECT_EQ(m.processes[1].peak, 4096);
  EXPECT_EQ(m.processes[1].at_end, 0);
  EXPECT_EQ(m.processes[2].device, "cuda:1");
  EXPECT_EQ(MemoryDeviceName(2, 0), "cpu");  // MKLDNN tensors live in host memory
  EXPECT_EQ(MemoryDeviceName(6, 3), "hip:3");
}

TEST(FunctionEvents, FilteredNamesAndProfilerStepsFollowTorch) {
  auto rows = Rows(Trace({X("ProfilerStep#3", 0, 10, 1, "{}", "user_annotation"),
                          X("ProfilerStep#4", 20, 10, 1, "{}", "user_annotation"),
                          X("aten::is_leaf", 1, 1), X("profiler::_record_function_exit", 2, 1)}));
  EXPECT_EQ(rows.count("aten::is_leaf"), 0u);
  EXPECT_EQ(rows.count("profiler::_record_function_exit"), 0u);
  EXPECT_EQ(rows["ProfilerStep*"].count, 2);
}

TEST(FunctionEvents, KernelsAttachThroughRuntimeInOlderTraces) {
  // External id == correlation: the kernel belongs to the op that contains the launch.
  auto rows = Rows(Trace(
      {X("aten::conv2d", 0, 100), X("aten::cudnn_convolution", 10, 80),
       X("cudaLaunchKernel", 20, 5, 1, R"({"External id": 9, "correlation": 9})", "cuda_runtime"),
       X("conv_kernel", 200, 40, 7, R"({"External id": 9, "correlation": 9})", "kernel")}));
  EXPECT_EQ(rows["aten::cudnn_convolution"].self_cuda, 40);
  EXPECT_EQ(rows["aten::conv2d"].cuda_total, 40);
  EXPECT_EQ(rows["aten::conv2d"].self_cuda, 0);
  EXPECT_EQ(rows["cuda:conv_kernel"].self_cuda, 40);
  EXPECT_EQ(rows["cuda:conv_kernel"].cpu_total, 0);
  EXPECT_EQ(rows["cudaLaunchKernel"].cuda_total, 0);
}

TEST(FunctionEvents, KernelsAttachByExternalIdInNewerTraces) {
  // External id != correlation: "External id" names the CPU op directly, even if the launch
  // happened under another range.
  auto rows =
      Rows(Trace({X("aten::mm", 0, 100, 1, R"({"External id": 5})"),
                  X("aten::other", 10, 20, 1, R"({"External id": 6})"),
                  X("cudaLaunchKernel", 12, 5, 1, R"({"External id": 5, "correlation": 1234})",
                    "cuda_runtime"),
                  X("gemm", 300, 30, 7, R"({"External id": 5, "correlation": 1234})", "kernel")}));
  EXPECT_EQ(rows["aten::mm"].self_cuda, 30);
  EXPECT_EQ(rows["aten::other"].cuda_total, 0);
}

TEST(FunctionEvents, IdsAtBothEndsOfTheIntegerRangeStillLink) {
  // The ids' range nearly fills 64 bits. (The event model keeps INT64_MIN for "no id".)
  auto rows = Rows(Trace(
      {X("aten::mm", 0, 100, 1, R"({"External id": 9223372036854775807})"),
       X("aten::add", 200, 100, 1, R"({"External id": -9223372036854775807})"),
       X("k1", 400, 30, 7, R"({"External id": 9223372036854775807, "correlation": 1})", "kernel"),
       X("k2", 500, 20, 7, R"({"External id": -9223372036854775807, "correlation": 2})",
         "kernel")}));
  EXPECT_EQ(rows["aten::mm"].self_cuda, 30);
  EXPECT_EQ(rows["aten::add"].self_cuda, 20);
}

TEST(AveragesTable, FormatsLikeTorch) {
  EXPECT_EQ(FormatTime(13600), "13.600ms");
  EXPECT_EQ(FormatTime(165), "165.000us");
  EXPECT_EQ(FormatTime(2.5e6), "2.500s");
  EXPECT_EQ(FormatTime(2.5e6, "ms"), "2500.000ms");
  EXPECT_EQ(FormatTimeShare(1, 3), "33.33%");
  EXPECT_EQ(FormatTimeShare(0, 0), "NaN");
  EXPECT_EQ(FormatMemory(1023), "1023 b");
  EXPECT_EQ(FormatMemory(-1024), "-1.00 Kb");
  EXPECT_EQ(FormatMemory(99393536), "94.79 Mb");
  EXPECT_EQ(FormatMemory(int64_t{3} << 30), "3.00 Gb");
}

TEST(AveragesTable, DeviceColumnsAppearWithDeviceTime) {
  auto trace = testing::MustImport(Trace(
      {X("op", 0, 100, 1, R"({"External id": 1})"),
       X("cudaLaunchKernel", 10, 5, 1, R"({"External id": 1, "correlation": 2})", "cuda_runtime"),
       X("k", 50, 25, 7, R"({"External id": 1, "correlation": 2})", "kernel")}));
  KeyAverages avg = ComputeKeyAverages(BuildFunctionEvents(*trace), false, 0);
  auto text = BuildAveragesTable(avg, TableOptions{});
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text.value().find("Self CUDA %"), std::string::npos);
  EXPECT_NE(text.value().find("Self CUDA time total: 25.000us\n"), std::string::npos);
  EXPECT_NE(text.value().find("Self CPU time total: 100.000us\n"), std::string::npos);
}

TEST(TorchFormat, TracesWithTorch2ArgumentsAreTorch2s) {
  for (const char* key : {"Record function id", "Concrete Inputs", "Input Strides"}) {
    auto trace = testing::MustImport(
        Trace({X("op", 0, 10, 1, std::string(R"({"External id": 1, ")") + key + R"(": 0})")}));
    EXPECT_EQ(BuildFunctionEvents(*trace)->torch_format, TorchFormat::k2) << key;
  }
  auto old = testing::MustImport(Trace({X("op", 0, 10, 1, R"({"External id": 1, "Ev Idx": 0})")}));
  EXPECT_EQ(BuildFunctionEvents(*old)->torch_format, TorchFormat::k113);
}

TEST(TorchFormat, Torch2KeysRowsByUserAnnotationToo) {
  auto trace = testing::MustImport(Trace(
      {X("step", 0, 100, 1, R"({"External id": 1, "Record function id": 0})", "user_annotation"),
       X("step", 200, 20, 1, R"({"External id": 2, "Record function id": 0})")}));
  std::shared_ptr<const FunctionEvents> fe = BuildFunctionEvents(*trace);
  EXPECT_EQ(ComputeKeyAverages(fe, false, 0).rows.size(), 2u);
  EXPECT_EQ(ComputeKeyAverages(fe, false, 0, TorchFormat::k113).rows.size(), 1u);
}

TEST(TorchFormat, Torch2CountsAGpuAnnotationSpanAsItsRangesDeviceTime) {
  const std::string events_args = R"({"External id": 1, "Record function id": 0})";
  auto torch2 = testing::MustImport(Trace(
      {X("ProfilerStep#1", 0, 100, 1, events_args, "user_annotation"),
       X("aten::mm", 10, 20, 1, R"({"External id": 2, "Record function id": 0})"),
       X("cudaLaunchKernel", 12, 5, 1, R"({"External id": 2, "correlation": 9})", "cuda_runtime"),
       X("ProfilerStep#1", 40, 50, 7, R"({"External id": 1})", "gpu_user_annotation"),
       X("k", 50, 25, 7, R"({"External id": 2, "correlation": 9})", "kernel")}));
  KeyAverages avg = ComputeKeyAverages(BuildFunctionEvents(*torch2), false, 0);
  const AverageRow* step = nullptr;
  for (const AverageRow& r : avg.rows) {
    if (avg.events->strings.Get(r.key) == "ProfilerStep*" && r.device == DeviceType::kCpu)
      step = &r;
  }
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->self_cuda_time_total_ns, 50000);  // the span
  EXPECT_EQ(step->cuda_time_total_ns, 75000);       // and the kernel under it
  auto text = BuildAveragesTable(avg, TableOptions{});
  ASSERT_TRUE(text.ok());
  // The footer leaves the annotation out, so the step's share is over 100 %.
  EXPECT_NE(text.value().find("Self CUDA time total: 25.000us\n"), std::string::npos);
  EXPECT_NE(text.value().find("200.00%"), std::string::npos);
}

// torch 1.13's _parse_kineto_results attaches the span as 2.x's does (issue 27: the NCCL trace's
// record_param_comms counts its kernel and the nccl:all_reduce span under it), and 1.13's footer
// counts every CUDA row, the span's among them.
TEST(TorchFormat, Torch113CountsAGpuAnnotationSpanAndItsFooterToo) {
  auto trace = testing::MustImport(Trace(
      {X("record_param_comms", 0, 100, 1, R"({"External id": 1})"),
       X("nccl:all_reduce", 10, 20, 1, R"({"External id": 2})", "user_annotation"),
       X("cudaLaunchKernel", 12, 5, 1, R"({"External id": 1, "correlation": 9})", "cuda_runtime"),
       X("nccl:all_reduce", 40, 30, 7, R"({"External id": 2})", "gpu_user_annotation"),
       X("ncclKernel", 40, 30, 7, R"({"External id": 1, "correlation": 9})", "kernel")}));
  std::shared_ptr<const FunctionEvents> fe = BuildFunctionEvents(*trace);
  ASSERT_EQ(fe->torch_format, TorchFormat::k113);
  KeyAverages avg = ComputeKeyAverages(fe, false, 0);
  const AverageRow* comms = nullptr;
  for (const AverageRow& r : avg.rows) {
    if (avg.events->strings.Get(r.key) == "record_param_comms") comms = &r;
  }
  ASSERT_NE(comms, nullptr);
  EXPECT_EQ(comms->self_cuda_time_total_ns, 30000);  // the kernel
  EXPECT_EQ(comms->cuda_time_total_ns, 60000);       // and the span, through nccl:all_reduce
  auto text = BuildAveragesTable(avg, TableOptions{});
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text.value().find("Self CUDA time total: 60.000us\n"), std::string::npos);
  TableOptions as_torch2;
  as_torch2.torch_format = TorchFormat::k2;
  auto text2 = BuildAveragesTable(avg, as_torch2);
  ASSERT_TRUE(text2.ok());
  EXPECT_NE(text2.value().find("Self CUDA time total: 30.000us\n"), std::string::npos);
}

// Library ITT tasks (oneDNN's) nest inside torch's operators: by default a trace with PyTorch
// operators leaves them out of the view, so the operator keeps its self time (issue 34); torch's
// own domain (torch.profiler.itt's ranges) stays.
TEST(FunctionEvents, IttTasksJoinOnlyWithoutTorchOperatorsOrWhenAsked) {
  const std::string dnnl = R"({"domain": "dnnl::primitive::execute"})";
  const std::string mine = R"({"domain": "mine"})";
  const std::string torch_domain = R"({"domain": "PyTorch"})";
  auto torch = testing::MustImport(
      Trace({X("aten::mkldnn_convolution", 0, 100, 1, R"({"External id": 1})", "cpu_op"),
             X("convolution", 10, 80, 1, dnnl, "itt"), X("step", 200, 50, 1, mine, "itt"),
             X("iteration_0", 300, 50, 1, torch_domain, "itt")}));
  auto self_of = [](const FunctionEvents& fe, std::string_view name) {
    int64_t self = -1;
    for (size_t i = 0; i < fe.size(); ++i) {
      if (fe.strings.Get(fe.name(i)) == name) self = fe.self_cpu_ns(i);
    }
    return self;
  };
  auto fe = BuildFunctionEvents(*torch);
  EXPECT_EQ(self_of(*fe, "aten::mkldnn_convolution"), 100000);
  EXPECT_EQ(self_of(*fe, "convolution"), -1);
  EXPECT_EQ(self_of(*fe, "iteration_0"), 50000);  // torch.profiler.itt's domain stays
  EXPECT_EQ(fe->itt_tasks_left_out, 2u);
  EXPECT_EQ(fe->itt_domains_left_out,
            (std::vector<std::string>{"dnnl::primitive::execute", "mine"}));
  IttSelection all{IttSelection::Mode::kAll, {}};
  fe = BuildFunctionEvents(*torch, all);
  EXPECT_EQ(self_of(*fe, "aten::mkldnn_convolution"), 20000);
  EXPECT_EQ(fe->itt_tasks_left_out, 0u);
  IttSelection only_mine{IttSelection::Mode::kDomains, {"mine"}};
  fe = BuildFunctionEvents(*torch, only_mine);
  EXPECT_EQ(self_of(*fe, "aten::mkldnn_convolution"), 100000);
  EXPECT_EQ(self_of(*fe, "step"), 50000);
  EXPECT_EQ(fe->itt_tasks_left_out, 2u);
  // An ITT-only workload keeps its tasks.
  auto itt_only = testing::MustImport(Trace({X("convolution", 10, 80, 1, dnnl, "itt")}));
  fe = BuildFunctionEvents(*itt_only);
  EXPECT_EQ(self_of(*fe, "convolution"), 80000);
  EXPECT_EQ(fe->itt_tasks_left_out, 0u);
}

TEST(AveragesTable, UnknownSortKeyListsValidOnes) {
  auto trace = testing::MustImport(Trace({X("op", 0, 1)}));
  KeyAverages avg = ComputeKeyAverages(BuildFunctionEvents(*trace), false, 0);
  TableOptions o;
  o.sort_by = "cpu_tme";
  auto text = BuildAveragesTable(avg, o);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("unknown sort_by key 'cpu_tme'"), std::string::npos);
  EXPECT_NE(text.error().message.find("self_cpu_time_total"), std::string::npos);
}

TEST(AveragesTable, EmptyListGivesEmptyString) {
  auto trace = testing::MustImport(Trace({}));
  KeyAverages avg = ComputeKeyAverages(BuildFunctionEvents(*trace), false, 0);
  auto text = BuildAveragesTable(avg, TableOptions{});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text.value(), "");
}

TEST(StacksExport, WritesFoldedLinesOutermostFirst) {
  auto trace = testing::MustImport(Trace(
      {X("outer", 0, 100, 1, R"({"Call stack": "inner.py(2): f;outer file.py(1): <module>"})"),
       X("child", 10, 30, 1, R"({"Call stack": "a;b"})"), X("nostack", 200, 5)}));
  std::string path = testing::TempPath("stacks.txt");
  ASSERT_TRUE(ExportTrace(*trace, "stacks", path, {{"metric", "self_cpu_time_total"}}).ok());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "outer_file.py(1):_<module>;inner.py(2):_f 70\nb;a 30\n");
  Status bad = ExportTrace(*trace, "stacks", path, {{"metric", "cpu_time"}});
  EXPECT_FALSE(bad.ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace profsh
