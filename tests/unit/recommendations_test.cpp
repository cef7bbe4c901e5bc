// Recommendations (engine/analysis/tensorboard/recommendations.h, docs/ANALYSIS.md
// "Recommendations"): each of profsh's rules fires on a trace that shows its cause, names the
// operators or kernels concerned with the time at stake, and stays quiet on the same trace
// without the cause; the plugin's rules at their thresholds, and its memory bug not reproduced.
#include "engine/analysis/tensorboard/recommendations.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/analysis/tensorboard/recommendation_inputs.h"
#include "test_util.h"

namespace profsh {
namespace {

using testing::MustImport;

// Kineto events, times in µs: host thread 1 of process 1, device 0's stream 7 (process 0).
std::string Op(const std::string& name, int64_t ts, int64_t dur, const char* cat = "cpu_op") {
  return R"({"ph":"X","cat":")" + std::string(cat) + R"(","name":")" + name +
         R"(","pid":1,"tid":1,"ts":)" + std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) +
         "}";
}
std::string Call(const std::string& name, int64_t ts, int64_t dur, int64_t correlation) {
  return R"({"ph":"X","cat":"cuda_runtime","name":")" + name + R"(","pid":1,"tid":1,"ts":)" +
         std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + R"(,"args":{"correlation":)" +
         std::to_string(correlation) + "}}";
}
std::string Work(const char* cat, const std::string& name, int64_t ts, int64_t dur,
                 int64_t correlation) {
  return R"({"ph":"X","cat":")" + std::string(cat) + R"(","name":")" + name +
         R"(","pid":0,"tid":7,"ts":)" + std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) +
         R"(,"args":{"correlation":)" + std::to_string(correlation) + R"(,"device":0,"stream":7}})";
}
std::unique_ptr<Trace> Load(const std::vector<std::string>& events) {
  std::string json = R"({"traceEvents":[)";
  for (size_t i = 0; i < events.size(); ++i) json += (i ? "," : "") + events[i];
  return MustImport(json + "]}");
}

// The recommendation of `rule`, or nullptr.
const Recommendation* Find(const std::vector<Recommendation>& all, const std::string& rule) {
  for (const Recommendation& r : all)
    if (r.rule == rule) return &r;
  return nullptr;
}

std::vector<Recommendation> Own(const Trace& trace, RecommendationOptions options = {}) {
  return ProfshRecommendations(trace, options);
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Recommendations, PageableCopiesNameTheOperatorAndDeviceTime) {
  auto trace =
      Load({Op("aten::to", 0, 100), Op("aten::copy_", 5, 90), Call("cudaMemcpyAsync", 10, 50, 5),
            Work("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 20, 30, 5),
            Call("cudaMemcpyAsync", 70, 10, 6),
            Work("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 75, 8, 6)});
  const auto all = Own(*trace);
  const Recommendation* r = Find(all, "pageable_memcpy");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->source, "profsh");
  EXPECT_EQ(r->time_at_stake_ns, 30'000);  // the pageable copy only
  EXPECT_TRUE(Has(r->text, "1 copy between the device and pageable host memory took 30.0 µs"))
      << r->text;
  // The operator the user called, not the copy_ inside it.
  EXPECT_TRUE(Has(r->evidence, "from: aten::to (1×, 30.0 µs)")) << r->evidence;

  auto pinned = Load({Op("aten::to", 0, 100), Call("cudaMemcpyAsync", 10, 50, 5),
                      Work("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 20, 30, 5)});
  EXPECT_EQ(Find(Own(*pinned), "pageable_memcpy"), nullptr);
}

TEST(Recommendations, SynchronousCopiesAndSetsHoldTheHost) {
  auto trace = Load({Op("aten::copy_", 0, 200), Call("cudaMemcpy", 10, 40, 1),
                     Op("aten::zero_", 300, 100), Call("cudaMemset", 310, 20, 2),
                     Op("aten::to", 500, 100), Call("cudaMemcpyAsync", 510, 90, 3)});
  const auto all = Own(*trace);
  const Recommendation* r = Find(all, "sync_memcpy");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->time_at_stake_ns, 60'000);  // the asynchronous call is not counted
  EXPECT_TRUE(Has(r->evidence, "cudaMemcpy (1×, 40.0 µs), cudaMemset (1×, 20.0 µs)"))
      << r->evidence;
  EXPECT_TRUE(Has(r->evidence, "from: aten::copy_ (1×, 40.0 µs), aten::zero_ (1×, 20.0 µs)"))
      << r->evidence;

  auto async_only = Load({Op("aten::to", 500, 100), Call("cudaMemcpyAsync", 510, 90, 3),
                          Call("cudaMemsetAsync", 700, 9, 4)});
  EXPECT_EQ(Find(Own(*async_only), "sync_memcpy"), nullptr);
}

TEST(Recommendations, SynchronizationsCountOnlyInsideSteps) {
  auto trace = Load({Op("ProfilerStep#1", 0, 1000, "user_annotation"), Op("aten::item", 100, 200),
                     Call("cudaStreamSynchronize", 150, 100, 1),
                     Call("cudaDeviceSynchronize", 2000, 500, 2)});
  const auto all = Own(*trace);
  const Recommendation* r = Find(all, "sync_in_step");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->time_at_stake_ns, 100'000);
  EXPECT_TRUE(Has(r->text, "1 device or stream synchronization inside steps")) << r->text;
  EXPECT_TRUE(Has(r->evidence, "calls: cudaStreamSynchronize (1×, 100.0 µs); from: aten::item"))
      << r->evidence;

  auto outside = Load({Op("ProfilerStep#1", 0, 1000, "user_annotation"),
                       Call("cudaDeviceSynchronize", 2000, 500, 2)});
  EXPECT_EQ(Find(Own(*outside), "sync_in_step"), nullptr);
}

TEST(Recommendations, GpuGapsListTheHostsWorkBySelfTime) {
  auto trace = Load({Work("kernel", "k1", 0, 10, 1), Work("kernel", "k2", 2000, 10, 2),
                     Op("aten::foo", 100, 1800), Op("aten::bar", 500, 400)});
  const auto all = Own(*trace);
  const Recommendation* r = Find(all, "gpu_gap");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->time_at_stake_ns, 1'990'000);
  // aten::foo's own time is its time in the gap less aten::bar's.
  EXPECT_TRUE(Has(r->evidence,
                  "GPU 0 idle 1.99 ms from 10.0 µs: CPU in aten::foo (1.40 ms), "
                  "aten::bar (400.0 µs)"))
      << r->evidence;

  RecommendationOptions longer;
  longer.gpu_gap_ns = 2'000'000;
  EXPECT_EQ(Find(Own(*trace, longer), "gpu_gap"), nullptr);
}

TEST(Recommendations, ShortKernelsFireWhenManyRunShorterThanTheirLaunch) {
  auto make = [](int64_t kernel_us) {
    std::vector<std::string> events;
    for (int i = 0; i < 12; ++i) {
      const int64_t ts = i * 100;
      events.push_back(Op("aten::add", ts, 50));
      events.push_back(Call("cudaLaunchKernel", ts + 5, 10, i + 1));
      events.push_back(Work("kernel", "add_kernel", ts + 20, kernel_us, i + 1));
    }
    return Load(events);
  };
  auto short_ones = make(2);
  const auto all = Own(*short_ones);
  const Recommendation* r = Find(all, "short_kernels");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->time_at_stake_ns, 120'000);  // the launch calls' time
  EXPECT_TRUE(Has(r->text, "12 of 12 kernels (100%)")) << r->text;
  EXPECT_TRUE(Has(r->evidence, "aten::add (12×, 120.0 µs)")) << r->evidence;
  EXPECT_TRUE(Has(r->evidence, "add_kernel (12×, 24.0 µs)")) << r->evidence;

  EXPECT_EQ(Find(Own(*make(20)), "short_kernels"), nullptr);
  RecommendationOptions more;
  more.min_short_kernels = 13;
  EXPECT_EQ(Find(Own(*short_ones, more), "short_kernels"), nullptr);
}

TEST(Recommendations, RecompilesNameTheRegionsAndCompileTime) {
  auto trace = Load({Op("ProfilerStep#1", 0, 1000, "user_annotation"),
                     Op("_compile.compile_inner (dynamo_timed)", 10, 80, "user_annotation"),
                     Op("Torch-Compiled Region: 0/0", 100, 200),
                     Op("_compile.compile_inner (dynamo_timed)", 450, 40, "user_annotation"),
                     Op("Torch-Compiled Region: 0/1", 500, 100)});
  const auto all = Own(*trace);
  const Recommendation* r = Find(all, "recompiles");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->time_at_stake_ns, 40'000);
  EXPECT_TRUE(Has(r->text, "1 recompile of 1 frame")) << r->text;
  EXPECT_TRUE(Has(r->evidence, "Torch-Compiled Region: 0/1 in step 1 (40.0 µs)")) << r->evidence;

  auto once = Load({Op("Torch-Compiled Region: 0/0", 100, 200)});
  EXPECT_EQ(Find(Own(*once), "recompiles"), nullptr);
}

TEST(Recommendations, PluginRulesFireAboveTheirThresholds) {
  PluginRuleInputs in;
  in.average_total_us = 1000;
  in.average_dataloader_us = 50;      // 5%: not above 5%
  in.average_communication_us = 100;  // 10%: not above 10%
  EXPECT_TRUE(PluginRecommendations(in).empty());
  in.average_dataloader_us = 51;
  in.average_communication_us = 101;
  auto all = PluginRecommendations(in);
  ASSERT_NE(Find(all, "dataloader"), nullptr);
  EXPECT_TRUE(Has(Find(all, "dataloader")->text, "5.1% of the step time is in DataLoader"));
  ASSERT_NE(Find(all, "communication"), nullptr);
  EXPECT_TRUE(Has(Find(all, "communication")->text, "10.1% of the step time is in communication"));

  PluginRuleInputs gpus;
  gpus.gpus = {{0, 0.49, 8, 0, 0}, {1, 0.5, 8, 0, 0}, {2, 0.1, 8, 0, 0}};
  all = PluginRecommendations(gpus);
  ASSERT_NE(Find(all, "low_gpu_utilization"), nullptr);
  EXPECT_TRUE(Has(Find(all, "low_gpu_utilization")->text, "GPU 0 and 2 have low utilization"));

  PluginRuleInputs tc;
  tc.first_device_compute_major = 7;
  tc.tc_used_ratio = 0.0;
  tc.tc_eligible_ops_kernel_ratio = 0.426;
  all = PluginRecommendations(tc);
  ASSERT_NE(Find(all, "tensor_cores"), nullptr);
  EXPECT_TRUE(Has(Find(all, "tensor_cores")->text, "Kernels with 43% time"));
  tc.first_device_compute_major = 6;
  EXPECT_EQ(Find(PluginRecommendations(tc), "tensor_cores"), nullptr);
  tc.first_device_compute_major = 7;
  tc.tc_used_ratio = 0.01;
  EXPECT_EQ(Find(PluginRecommendations(tc), "tensor_cores"), nullptr);

  PluginRuleInputs dist;
  dist.use_dp = true;
  dist.used_devices = {0, 1};
  dist.use_ddp = true;
  dist.device_properties = {{0, std::nullopt, 3, 5, 0}};
  all = PluginRecommendations(dist);
  EXPECT_NE(Find(all, "data_parallel"), nullptr);
  EXPECT_NE(Find(all, "ddp_backend"), nullptr);
  dist.uses_nccl = true;
  dist.used_devices = {0};
  all = PluginRecommendations(dist);
  EXPECT_EQ(Find(all, "data_parallel"), nullptr);
  EXPECT_EQ(Find(all, "ddp_backend"), nullptr);
}

// The plugin looks a peak's device up by position in deviceProperties and skips device type -1,
// which no record has: the CPU's peak (type 0, id -1) meets the last GPU's memory. profsh
// compares only GPU peaks, each with its own GPU's entry.
TEST(Recommendations, MemoryPeakComparesEachGpuWithItsOwnMemory) {
  PluginRuleInputs in;
  const int64_t gib = int64_t{1} << 30;
  in.device_properties = {{0, std::nullopt, 8, 0, 80 * gib}, {1, std::nullopt, 8, 0, 16 * gib}};
  in.memory_peaks = {{0, -1, 15 * gib}, {1, 0, 15 * gib}};
  EXPECT_EQ(Find(PluginRecommendations(in), "memory_peak"), nullptr);
  in.memory_peaks.push_back({1, 1, 15 * gib});
  const auto all = PluginRecommendations(in);
  const Recommendation* r = Find(all, "memory_peak");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(Has(r->text, "(93.8% of 16.0GB on GPU1)")) << r->text;
}

TEST(Recommendations, RowsHoldBothRuleSetsAndNoteWhenNoneFires) {
  auto trace = Load({Op("aten::to", 0, 100), Call("cudaMemcpy", 10, 50, 5)});
  PluginRuleInputs in;
  in.average_total_us = 100;
  in.average_dataloader_us = 50;
  AnalysisRows rows = RecommendationRows(*trace, {}, &in);
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(rows.rows.text(0, rows.Column("rule")), "dataloader");
  EXPECT_EQ(rows.rows.text(0, rows.Column("source")), "plugin");
  EXPECT_EQ(rows.rows.text(1, rows.Column("rule")), "sync_memcpy");
  EXPECT_EQ(rows.rows.cell(1, rows.Column("time_at_stake")).Format(), "50.000");

  auto quiet = Load({Op("aten::add", 0, 100)});
  PluginRuleInputs none;
  rows = RecommendationRows(*quiet, {}, &none);
  EXPECT_EQ(rows.rows.size(), 0u);
  ASSERT_EQ(rows.notes.size(), 1u);
  EXPECT_EQ(rows.notes[0], "no rule fired");
}

TEST(Recommendations, ParserFlagsComeFromRangeNamesAndDeviceWork) {
  auto trace = Load({Op("DistributedDataParallel.forward", 0, 100, "user_annotation"),
                     Op("nccl:all_reduce", 10, 10), Work("kernel", "k", 20, 5, 1)});
  const PluginRuleInputs in = PluginRuleInputsOf(*trace);
  EXPECT_TRUE(in.use_ddp);
  EXPECT_FALSE(in.use_dp);
  EXPECT_TRUE(in.uses_nccl);
  EXPECT_EQ(in.used_devices, std::vector<int64_t>{0});
}

}  // namespace
}  // namespace profsh
