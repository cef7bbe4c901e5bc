// Device work to its op through the event model's launch links: torch's rule is the first event
// of its own list that carries the id, so candidates the view leaves out are passed over.
#include <gtest/gtest.h>

#include <string>

#include "engine/analysis/function_events.h"
#include "tests/unit/test_util.h"

namespace profsh {
namespace {

std::string Ev(const std::string& name, const std::string& cat, int ts, int dur, int tid,
               const std::string& args) {
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name + R"(", "pid": 1, "tid": )" +
         std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" +
         std::to_string(dur) + R"(, "args": )" + args + "}";
}

int64_t SelfCudaOf(const FunctionEvents& fe, std::string_view name) {
  for (size_t i = 0; i < fe.size(); ++i) {
    if (fe.strings.Get(fe.name(i)) == name && fe.device(i) == DeviceType::kCpu)
      return fe.self_cuda_ns(i);
  }
  return -1;
}

TEST(FunctionEventsLinks, FirstCandidateInTheViewWins) {
  // aten::is_leaf (a name torch filters out) and an ITT task of another domain carry the
  // kernel's External id before the op does; a second op with the id comes after.
  auto trace = testing::MustImport(
      "{\"traceEvents\": [" + Ev("aten::is_leaf", "cpu_op", 0, 5, 1, R"({"External id": 7})") +
      "," + Ev("convolution", "itt", 6, 2, 1, R"({"External id": 7, "domain": "dnnl"})") + "," +
      Ev("aten::mm", "cpu_op", 10, 50, 1, R"({"External id": 7})") + "," +
      Ev("aten::add", "cpu_op", 100, 50, 1, R"({"External id": 7})") + "," +
      Ev("cudaLaunchKernel", "cuda_runtime", 20, 5, 1, R"({"External id": 7, "correlation": 3})") +
      "," + Ev("k", "kernel", 200, 30, 9, R"({"External id": 7, "correlation": 3})") + "," +
      Ev("sync", "cuda_sync", 240, 10, 9, R"({"External id": 7, "correlation": 3})") + "]}");
  auto fe = BuildFunctionEvents(*trace);
  EXPECT_EQ(SelfCudaOf(*fe, "aten::mm"), 30000);
  EXPECT_EQ(SelfCudaOf(*fe, "aten::add"), 0);
  ASSERT_EQ(fe->launches.size(), 1u);  // the synchronization is not device work of the view
  EXPECT_EQ(fe->strings.Get(fe->name(fe->launches[0].op)), "aten::mm");
  EXPECT_EQ(fe->strings.Get(fe->name(fe->launches[0].runtime)), "cudaLaunchKernel");
}

// Older Kineto: the kernel's External id is its correlation; the op is the runtime call's parent.
TEST(FunctionEventsLinks, EqualIdsGoThroughTheRuntimeCall) {
  auto trace = testing::MustImport(
      "{\"traceEvents\": [" + Ev("aten::mm", "cpu_op", 10, 50, 1, R"({"External id": 3})") + "," +
      Ev("cudaLaunchKernel", "cuda_runtime", 20, 5, 1, R"({"correlation": 3})") + "," +
      Ev("k", "kernel", 200, 30, 9, R"({"External id": 3, "correlation": 3})") + "]}");
  auto fe = BuildFunctionEvents(*trace);
  EXPECT_EQ(SelfCudaOf(*fe, "aten::mm"), 30000);
}

}  // namespace
}  // namespace profsh
