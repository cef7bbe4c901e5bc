// What the event model reads for the compile, ranks and memory views: torch.compile's roles by
// name, fwdbwd flows paired by id, a collective's arguments, and the [memory] records.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/analysis/model/collective_args.h"
#include "engine/analysis/model/compile_roles.h"
#include "engine/analysis/model/forward_backward_flows.h"
#include "engine/analysis/model/memory_records.h"
#include "test_util.h"

namespace profsh {
namespace {

TEST(ModelViews, CompileRolesByName) {
  EXPECT_EQ(CompileRoleOfName("Torch-Compiled Region: 0/1"), CompileRole::kRegion);
  EXPECT_EQ(CompileRoleOfName("CompiledFunction"), CompileRole::kForward);
  EXPECT_EQ(CompileRoleOfName("CompiledFunctionBackward"), CompileRole::kBackward);
  EXPECT_EQ(CompileRoleOfName("compile_fx_inner (dynamo_timed)"), CompileRole::kCompileWork);
  EXPECT_EQ(CompileRoleOfName("TorchDynamo Cache Lookup"), CompileRole::kGuard);
  EXPECT_EQ(CompileRoleOfName("graph_0_cpp_fused_add_0"), CompileRole::kCppKernel);
  EXPECT_EQ(CompileRoleOfName("triton_poi_fused_0"), CompileRole::kTritonLaunch);
  EXPECT_EQ(CompileRoleOfName("aten::mm"), CompileRole::kNone);
  int64_t frame = 0, recompile = 0;
  ParseCompiledRegion("Torch-Compiled Region: 12/3", &frame, &recompile);
  EXPECT_EQ(frame, 12);
  EXPECT_EQ(recompile, 3);
  ParseCompiledRegion("Torch-Compiled Region: x/3", &frame, &recompile);
  EXPECT_EQ(frame, -1);
  EXPECT_EQ(recompile, -1);
  ParseCompiledRegion("Torch-Compiled Region: 4/", &frame, &recompile);
  EXPECT_EQ(frame, 4);
  EXPECT_EQ(recompile, -1);
}

TEST(ModelViews, ForwardBackwardFlowsPairByIdAndTheLatestStart) {
  auto t = testing::MustImport(R"json({"traceEvents": [
    {"ph": "f", "cat": "fwdbwd", "name": "fwdbwd", "id": 1, "pid": 1, "tid": 2, "ts": 50, "bp": "e"},
    {"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "id": 1, "pid": 1, "tid": 1, "ts": 10},
    {"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "id": 2, "pid": 1, "tid": 1, "ts": 20},
    {"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "id": 2, "pid": 1, "tid": 1, "ts": 30},
    {"ph": "f", "cat": "fwdbwd", "name": "fwdbwd", "id": 2, "pid": 1, "tid": 2, "ts": 60, "bp": "e"},
    {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 3, "pid": 1, "tid": 2, "ts": 70, "bp": "e"},
    {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 3, "pid": 1, "tid": 1, "ts": 40},
    {"ph": "f", "cat": "fwdbwd", "name": "fwdbwd", "id": 9, "pid": 1, "tid": 2, "ts": 80, "bp": "e"}
  ]})json");
  const std::vector<ForwardBackwardFlow> flows = ForwardBackwardFlows(*t);
  ASSERT_EQ(flows.size(), 2u);  // ac2g is not fwdbwd; id 9 has no start
  // The finish comes first in the file, its start after it: still one flow.
  EXPECT_EQ(flows[0].forward.ts, 10'000);
  EXPECT_EQ(flows[0].backward.ts, 50'000);
  EXPECT_EQ(flows[1].forward.ts, 30'000);  // the latest start of id 2
  EXPECT_EQ(flows[1].backward.ts, 60'000);
  EXPECT_NE(flows[0].forward.track, flows[0].backward.track);
}

TEST(ModelViews, CollectiveArgumentsWhenTheyAreThere) {
  auto t = testing::MustImport(R"json({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 0,
     "dur": 5, "args": {"Process Group Name": "0", "Collective name": "all_reduce", "Seq": 7}},
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 10,
     "dur": 5, "args": {"Collective name": 3, "Seq": "x"}}
  ]})json");
  const CollectiveArgs args(*t);
  EXPECT_EQ(args.Group(0).value_or("?"), "0");
  EXPECT_EQ(args.Name(0).value_or("?"), "all_reduce");
  EXPECT_EQ(args.Seq(0).value_or(-1), 7);
  EXPECT_FALSE(args.Group(1));
  EXPECT_FALSE(args.Name(1));  // not a string
  EXPECT_FALSE(args.Seq(1));   // not a number
}

TEST(ModelViews, MemoryRecordsWithTheirDevice) {
  auto t = testing::MustImport(R"json({"traceEvents": [
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1,
     "args": {"Bytes": 512, "Device Type": 1, "Device Id": 2}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 2, "args": {"Bytes": -512}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 3, "args": {"Bytes": "?"}},
    {"ph": "i", "s": "t", "name": "other", "pid": 1, "tid": 1, "ts": 4, "args": {"Bytes": 1}}
  ]})json");
  const std::vector<MemoryRecord> r = MemoryRecordsOf(*t);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].bytes, 512);
  EXPECT_EQ(r[0].device_type, 1);
  EXPECT_EQ(r[0].device_id, 2);
  EXPECT_EQ(r[1].bytes, -512);
  EXPECT_EQ(r[1].device_type, 0);  // host when not written
  EXPECT_EQ(t->events.ts(r[1].event), 2'000);
  EXPECT_FALSE(r[0].has_addr);
  EXPECT_TRUE(std::isnan(r[0].total_allocated));
}

TEST(ModelViews, MemoryRecordsWithAddressAndAllocatorTotals) {
  auto t = testing::MustImport(R"json({"traceEvents": [
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1,
     "args": {"Bytes": 512, "Addr": 18446744073709551615, "Total Allocated": 1536,
              "Total Reserved": 2097152}}
  ]})json");
  const std::vector<MemoryRecord> r = MemoryRecordsOf(*t);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].has_addr);
  EXPECT_EQ(static_cast<uint64_t>(r[0].addr), UINT64_MAX);
  EXPECT_EQ(r[0].total_allocated, 1536);
  EXPECT_EQ(r[0].total_reserved, 2097152);
}

}  // namespace
}  // namespace profsh
