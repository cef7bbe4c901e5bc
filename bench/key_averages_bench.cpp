// Prints how long key_averages() takes on a large trace, and what a loaded trace costs in memory.
//
//   key_averages_bench [EVENTS_MILLIONS=10] [RUNS=3]
//
// The trace is built in memory with the same builder the importers use: per step, nested CPU
// operators with shapes and ids, runtime calls, kernels on a device stream, flows and memory
// records, in the proportions of the real Kineto traces in ../shared/traces. Each run computes the
// operator view and the averages from scratch (nothing is cached between runs) and formats the
// table, as trace:key_averages():table() does.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "engine/analysis/averages_table.h"
#include "engine/analysis/function_events.h"
#include "engine/analysis/key_averages.h"
#include "engine/trace/kineto_schema.h"
#include "engine/trace/trace_builder.h"

namespace {

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

std::unique_ptr<profsh::Trace> BuildTrace(size_t target_events) {
  using namespace profsh;
  auto trace = std::make_unique<Trace>();
  TraceBuilder b(*trace);
  std::mt19937_64 rng(7);
  const char* ops[] = {"aten::addmm",      "aten::mm",    "aten::conv2d", "aten::convolution",
                       "aten::relu",       "aten::add",   "aten::mul",    "aten::softmax",
                       "aten::layer_norm", "aten::copy_", "aten::empty",  "aten::view",
                       "aten::cat",        "aten::sum",   "aten::gelu",   "aten::linear"};
  const char* shapes[] = {"[[512],[512,1408],[1408,512],[],[]]", "[[32,128,768],[768,768]]",
                          "[[32,64,56,56]]"};
  std::vector<uint32_t> words;
  auto schema_with =
      [&](std::initializer_list<std::pair<std::string_view, std::string_view>> constants,
          std::initializer_list<std::string_view> inline_ints) {
        b.BeginArgs();
        for (std::string_view k : inline_ints) b.AddInlineInt32Arg(k);
        for (const auto& [k, json] : constants) b.AddJsonArg(k, json);
        return b.BuildSchema();
      };
  std::vector<uint32_t> op_schemas;
  for (const char* s : shapes)
    op_schemas.push_back(schema_with(
        {{kineto::kInputDims, s}}, {kineto::kExternalId, kineto::kSequenceNumber, kineto::kEvIdx}));
  uint32_t runtime_schema = schema_with({}, {kineto::kExternalId, kineto::kCorrelation});
  uint32_t kernel_schema = schema_with({{"grid", "[512,1,1]"}, {"block", "[512,1,1]"}},
                                       {kineto::kExternalId, kineto::kCorrelation});
  b.BeginArgs();
  b.AddInlineInt32Arg(kineto::kFlowId, TraceBuilder::Place::kTopLevel);
  const uint32_t flow_schema = b.BuildSchema();
  uint32_t memory_schema = schema_with({}, {kineto::kBytes, kineto::kDeviceType});

  Ident pid{4242, 0, false}, tid{4243, 0, false}, gpu{0, 0, false}, stream{7, 0, false};
  int64_t t = 0, gpu_t = 0;
  uint32_t ext = 1, corr = 100000, seq = 0;
  size_t events = 0;
  auto add = [&](char ph, std::string_view cat, std::string_view name, Ident p, Ident th,
                 int64_t ts, int64_t dur, uint32_t schema, std::initializer_list<uint32_t> w) {
    EventFields e;
    e.phase = ph;
    e.category = cat;
    e.name = name;
    e.pid = p;
    e.tid = th;
    e.ts = ts;
    e.dur = dur;
    words.assign(w);
    b.AddEvent(e, schema, words);
    ++events;
  };
  while (events < target_events) {
    int64_t step_start = t;
    for (int op = 0; op < 50; ++op) {
      int depth = 1 + static_cast<int>(rng() % 3);
      int64_t start = t + 1000;
      int64_t end = start + 20000 + static_cast<int64_t>(rng() % 20000);
      for (int d = 0; d < depth; ++d) {
        int64_t s = start + d * 500, e = end - d * 500;
        add('X', kineto::kCpuOp, ops[rng() % std::size(ops)], pid, tid, s, e - s,
            op_schemas[rng() % op_schemas.size()], {ext, seq++, ext});
        ++ext;
      }
      int64_t launch = start + depth * 500 + 100;
      add('X', kineto::kCudaRuntime, "cudaLaunchKernel", pid, tid, launch, 3000, runtime_schema,
          {ext - 1, corr});
      add('s', kineto::kAc2g, kineto::kAc2g, pid, tid, launch, 0, flow_schema, {corr});
      gpu_t = std::max(gpu_t, launch + 2000);
      int64_t kdur = 5000 + static_cast<int64_t>(rng() % 50000);
      add('X', kineto::kKernel,
          rng() % 2 ? "ampere_sgemm_128x64_tn" : "void at::native::vectorized_elementwise_kernel",
          gpu, stream, gpu_t, kdur, kernel_schema, {ext - 1, corr});
      add('f', kineto::kAc2g, kineto::kAc2g, gpu, stream, gpu_t, 0, flow_schema, {corr});
      gpu_t += kdur;
      ++corr;
      if (rng() % 4 == 0)
        add('i', kineto::kCpuInstantEvent, kineto::kMemoryEvent, pid, tid, start + 700, 0,
            memory_schema, {4096, 0});
      t = end + 1000;
    }
    add('X', kineto::kUserAnnotation, "ProfilerStep#" + std::to_string(ext), pid, tid, step_start,
        t - step_start, TraceBuilder::kNoArgs, {});
  }
  b.Finish();
  return trace;
}

}  // namespace

int main(int argc, char** argv) {
  double millions = argc > 1 ? std::atof(argv[1]) : 10;
  int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  size_t before = ResidentBytes();
  auto trace = BuildTrace(static_cast<size_t>(millions * 1e6));
  size_t resident = ResidentBytes() - before;
  std::printf(
      "trace: %zu events, %.1f bytes/event resident (columns %zu, inline args %.1f, strings %.1f "
      "MB, %zu event templates)\n",
      trace->events.size(),
      static_cast<double>(resident) / static_cast<double>(trace->events.size()),
      profsh::EventTable::kBytesPerEvent,
      static_cast<double>(trace->args.arena_words()) * 4 /
          static_cast<double>(trace->events.size()),
      trace->strings.TotalStringBytes() / 1e6, trace->events.templates().size());
  std::vector<double> seconds, cpu;
  double first_run = 0;
  size_t rows = 0, table_bytes = 0;
  for (int r = 0; r < runs; ++r) {
    double cpu_start = CpuSeconds();
    auto start = std::chrono::steady_clock::now();
    std::shared_ptr<const profsh::FunctionEvents> fe = profsh::BuildFunctionEvents(*trace);
    profsh::KeyAverages avg = profsh::ComputeKeyAverages(fe, false, 0);
    profsh::TableOptions opts;
    opts.sort_by = "cpu_time_total";
    auto text = profsh::BuildAveragesTable(avg, opts);
    auto end = std::chrono::steady_clock::now();
    seconds.push_back(std::chrono::duration<double>(end - start).count());
    cpu.push_back(CpuSeconds() - cpu_start);
    if (r == 0) first_run = seconds.back();
    rows = avg.rows.size();
    table_bytes = text.ok() ? text.value().size() : 0;
    std::printf("run %d: %.3f s wall, %.3f s CPU (%zu operator events)\n", r + 1, seconds.back(),
                cpu.back(), fe->size());
  }
  std::sort(seconds.begin(), seconds.end());
  std::sort(cpu.begin(), cpu.end());
  std::printf(
      "key_averages + table over %.1f M events: median %.3f s wall, %.3f s CPU; first run %.3f s "
      "(%zu rows, %zu bytes of table)\n",
      static_cast<double>(trace->events.size()) / 1e6, seconds[seconds.size() / 2],
      cpu[cpu.size() / 2], first_run, rows, table_bytes);
  return 0;
}
