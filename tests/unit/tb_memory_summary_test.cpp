// The TensorBoard plugin's memory view (engine/analysis/tensorboard/memory_summary.h): records
// attributed to the deepest operator of their thread, per-operator statistics with and without
// children, allocations matched to frees by address, the allocator's curve per device.
#include "engine/analysis/tensorboard/memory_summary.h"

#include <gtest/gtest.h>

#include "engine/analysis/tensorboard/host_tree.h"
#include "test_util.h"

namespace profsh::tensorboard {
namespace {

// One step on thread 1: aten::linear (10..50) calls aten::empty (12..14) and aten::addmm
// (20..40); a GPU allocation under addmm is freed at 45 inside linear; a CPU block allocated in
// aten::empty is never freed; a GPU free at 60 matches nothing; a record at 5 lies under the
// step only. Thread 2's aten::add gets one allocation.
const char kTrace[] = R"json({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 10, "dur": 40},
  {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 12, "dur": 2},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 20, "dur": 20},
  {"ph": "X", "cat": "user_annotation", "name": "my_range", "pid": 1, "tid": 1, "ts": 21, "dur": 5},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 2, "ts": 30, "dur": 10},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 5,
   "args": {"Bytes": 64, "Addr": 7, "Device Type": 0, "Device Id": -1, "Total Allocated": 64,
            "Total Reserved": 0}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 13,
   "args": {"Bytes": 1024, "Addr": 100, "Device Type": 0, "Device Id": -1,
            "Total Allocated": 1088, "Total Reserved": 0}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 22,
   "args": {"Bytes": 4096, "Addr": 200, "Device Type": 1, "Device Id": 0,
            "Total Allocated": 4096, "Total Reserved": 2097152}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 2, "ts": 35,
   "args": {"Bytes": 512, "Addr": 300, "Device Type": 1, "Device Id": 0,
            "Total Allocated": 4608, "Total Reserved": 2097152}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 45,
   "args": {"Bytes": -4096, "Addr": 200, "Device Type": 1, "Device Id": 0,
            "Total Allocated": 512, "Total Reserved": 2097152}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 60,
   "args": {"Bytes": -256, "Addr": 400, "Device Type": 1, "Device Id": 0,
            "Total Allocated": 256, "Total Reserved": 2097152}}
]})json";

const DeviceMemorySummary& Device(const MemorySummary& s, const std::string& name) {
  for (const DeviceMemorySummary& d : s.devices)
    if (d.device == name) return d;
  throw std::runtime_error("no device " + name);
}

const MemoryOperatorStats* Operator(const DeviceMemorySummary& d, const std::string& name) {
  for (const MemoryOperatorStats& o : d.operators)
    if (o.name == name) return &o;
  return nullptr;
}

TEST(TbHostTree, KeepsThePluginsNodesOnly) {
  HostNodeKind kind;
  ASSERT_TRUE(PluginHostNodeKind("cpu_op", "aten::mm", &kind));
  EXPECT_EQ(kind, HostNodeKind::kOperator);
  ASSERT_TRUE(PluginHostNodeKind("user_annotation", "ProfilerStep#2", &kind));
  EXPECT_EQ(kind, HostNodeKind::kStep);
  ASSERT_TRUE(PluginHostNodeKind("python_function", "nn.Module: Linear_0", &kind));
  EXPECT_EQ(kind, HostNodeKind::kModule);
  ASSERT_TRUE(PluginHostNodeKind("user_annotation", "nccl:all_reduce", &kind));
  EXPECT_EQ(kind, HostNodeKind::kOther);
  ASSERT_TRUE(PluginHostNodeKind("cpu_op", "Optimizer.zero_grad#SGD.zero_grad", &kind));
  EXPECT_EQ(kind, HostNodeKind::kOther);
  ASSERT_TRUE(PluginHostNodeKind("cpu_op", "DistributedDataParallel.forward", &kind));
  EXPECT_EQ(kind, HostNodeKind::kOther);
  EXPECT_FALSE(PluginHostNodeKind("user_annotation", "my_range", &kind));
  EXPECT_FALSE(PluginHostNodeKind("python_function", "torch/nn/functional.py(1): relu", &kind));
  EXPECT_FALSE(PluginHostNodeKind("kernel", "sgemm", &kind));
}

TEST(TbHostTree, DropsARangeThatCrossesItsParentsEnd) {
  auto t = testing::MustImport(R"json({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 5, "dur": 10},
    {"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 2, "dur": 3}
  ]})json");
  const HostTree tree = BuildHostTree(ModelOf(*t));
  ASSERT_EQ(tree.threads.size(), 1u);
  ASSERT_EQ(tree.threads[0].roots.size(), 1u);
  const HostNode& a = tree.nodes[tree.threads[0].roots[0]];
  ASSERT_EQ(a.children.size(), 1u);  // c; b crosses a's end
  EXPECT_EQ(t->str(t->events.name(tree.nodes[a.children[0]].event)), "c");
  EXPECT_EQ(tree.DeepestAt(tree.threads[0], 3'000), a.children[0]);
  EXPECT_EQ(tree.DeepestAt(tree.threads[0], 5'000), tree.threads[0].roots[0]);  // [2, 5)
  EXPECT_EQ(tree.DeepestAt(tree.threads[0], 10'000), kNoIndex);
}

TEST(TbHostTree, MergesAnOperatorsOnlyChildOfTheSameName) {
  auto t = testing::MustImport(R"json({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::sum", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
    {"ph": "X", "cat": "cpu_op", "name": "aten::sum", "pid": 1, "tid": 1, "ts": 1, "dur": 8},
    {"ph": "X", "cat": "cpu_op", "name": "aten::fill_", "pid": 1, "tid": 1, "ts": 2, "dur": 1},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1.5,
     "args": {"Bytes": 1024, "Device Type": 0}}
  ]})json");
  const HostTree tree = BuildHostTree(ModelOf(*t));
  const HostNode& outer = tree.nodes[tree.threads[0].roots[0]];
  ASSERT_EQ(outer.children.size(), 1u);
  EXPECT_EQ(t->str(t->events.name(tree.nodes[outer.children[0]].event)), "aten::fill_");
  EXPECT_EQ(tree.nodes[outer.children[0]].parent, tree.threads[0].roots[0]);
  // One call, and the inner call's allocation counted once.
  const MemorySummary s = BuildMemorySummary(*t);
  ASSERT_EQ(s.devices.size(), 1u);
  ASSERT_EQ(s.devices[0].operators.size(), 1u);
  EXPECT_EQ(s.devices[0].operators[0].calls, 1);
  EXPECT_EQ(s.devices[0].operators[0].allocation_size, 1024);
  EXPECT_EQ(s.devices[0].operators[0].self_allocation_size, 1024);
}

TEST(TbMemorySummary, OperatorStatisticsWithAndWithoutChildren) {
  auto t = testing::MustImport(kTrace);
  const MemorySummary s = BuildMemorySummary(*t);
  EXPECT_EQ(s.default_device, "GPU0");
  EXPECT_EQ(s.unattributed_records, 2);  // ts 5 (the step) and 60 (no operator)
  const DeviceMemorySummary& gpu = Device(s, "GPU0");
  const MemoryOperatorStats* addmm = Operator(gpu, "aten::addmm");
  ASSERT_TRUE(addmm);
  // The allocation under my_range (not a node) counts for addmm.
  EXPECT_EQ(addmm->calls, 1);
  EXPECT_EQ(addmm->self_allocation_count, 1);
  EXPECT_EQ(addmm->self_allocation_size, 4096);
  EXPECT_EQ(addmm->self_size_increase, 4096);
  const MemoryOperatorStats* linear = Operator(gpu, "aten::linear");
  ASSERT_TRUE(linear);
  // Its own free at 45, and addmm's allocation among its children.
  EXPECT_EQ(linear->self_size_increase, -4096);
  EXPECT_EQ(linear->self_allocation_count, 0);
  EXPECT_EQ(linear->size_increase, 0);
  EXPECT_EQ(linear->allocation_count, 1);
  EXPECT_EQ(linear->allocation_size, 4096);
  ASSERT_TRUE(Operator(gpu, "aten::add"));
  EXPECT_EQ(Operator(gpu, "aten::add")->self_allocation_size, 512);
  EXPECT_FALSE(Operator(gpu, "aten::empty"));  // no GPU record
  const DeviceMemorySummary& cpu = Device(s, "CPU");
  ASSERT_TRUE(Operator(cpu, "aten::empty"));
  EXPECT_EQ(Operator(cpu, "aten::linear")->allocation_size, 1024);
  EXPECT_EQ(Operator(cpu, "aten::linear")->self_allocation_size, 0);
}

TEST(TbMemorySummary, AllocationsMatchedByAddress) {
  auto t = testing::MustImport(kTrace);
  const MemorySummary s = BuildMemorySummary(*t);
  ASSERT_EQ(s.start_ns, 0);
  const DeviceMemorySummary& gpu = Device(s, "GPU0");
  ASSERT_EQ(gpu.allocations.size(), 3u);
  // The matched pair first, then the block never freed, then the free of unknown memory.
  EXPECT_EQ(gpu.allocations[0].op, "aten::addmm");
  EXPECT_EQ(gpu.allocations[0].bytes, 4096);
  EXPECT_EQ(gpu.allocations[0].alloc_ts, 22'000);
  EXPECT_EQ(gpu.allocations[0].free_ts, 45'000);
  EXPECT_EQ(gpu.allocations[1].op, "aten::add");
  EXPECT_FALSE(gpu.allocations[1].free_ts);
  EXPECT_EQ(gpu.allocations[2].op, "<unknown>");
  EXPECT_EQ(gpu.allocations[2].bytes, 256);
  EXPECT_FALSE(gpu.allocations[2].alloc_ts);
  const DeviceMemorySummary& cpu = Device(s, "CPU");
  ASSERT_EQ(cpu.allocations.size(), 2u);
  EXPECT_EQ(cpu.allocations[0].op, "<unknown>");  // ts 5: under the step, no operator
  // aten::empty shows the operator that called it.
  EXPECT_EQ(cpu.allocations[1].op, "aten::linear (aten::empty)");
}

TEST(TbMemorySummary, CurveAndPeakPerDevice) {
  auto t = testing::MustImport(kTrace);
  const MemorySummary s = BuildMemorySummary(*t);
  const DeviceMemorySummary& gpu = Device(s, "GPU0");
  ASSERT_EQ(gpu.curve.size(), 4u);
  EXPECT_EQ(gpu.curve[1].ts, 35'000);
  EXPECT_EQ(gpu.curve[1].allocated, 4608);
  EXPECT_EQ(gpu.curve[1].reserved, 2097152);
  EXPECT_EQ(gpu.peak_allocated, 4608);
  EXPECT_EQ(Device(s, "CPU").peak_allocated, 1088);
  const MemorySummaryRows rows = MemorySummaryAsRows(s);
  EXPECT_EQ(rows.curve.rows.size(), 6u);
  EXPECT_EQ(rows.devices.rows.size(), 2u);
  const size_t duration = rows.allocations.Column("duration");
  ASSERT_NE(duration, SIZE_MAX);
  EXPECT_EQ(rows.allocations.rows.cell(0, duration).Format(), "");  // CPU's ts-5 block: no free
  EXPECT_EQ(rows.allocations.rows.cell(2, duration).double_value, 23.0);  // GPU pair, µs
  ASSERT_EQ(rows.operators.notes.size(), 1u);
}

TEST(TbMemorySummary, RecordsWithoutAddressStayOutOfCurveAndAllocations) {
  auto t = testing::MustImport(R"json({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::ones", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1,
     "args": {"Bytes": 64, "Device Type": 0, "Total Allocated": 64, "Total Reserved": 0}}
  ]})json");
  const MemorySummary s = BuildMemorySummary(*t);
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_TRUE(s.devices[0].curve.empty());
  EXPECT_TRUE(s.devices[0].allocations.empty());
  ASSERT_EQ(s.devices[0].operators.size(), 1u);  // the statistics need no address
  EXPECT_EQ(s.devices[0].operators[0].self_allocation_size, 64);
}

}  // namespace
}  // namespace profsh::tensorboard
