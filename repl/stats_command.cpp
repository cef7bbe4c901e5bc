#include "repl/stats_command.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "engine/analysis/kernel_table.h"
#include "engine/analysis/nsys_stats.h"
#include "engine/importers/importer.h"

namespace profsh::repl {

namespace {

constexpr char kUsage[] =
    "usage: profsh stats TRACE [--report NAME] [--format table|csv]\n"
    "\n"
    "Prints Nsight Systems' statistical reports computed from TRACE (any trace profsh loads),\n"
    "with nsys' column headers and units; every report unless --report names one.\n"
    "\n"
    "reports: cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum,\n"
    "         nvtx_sum, nvtx_kern_sum, nvtx_gpu_proj_sum\n";

constexpr char kKernelsUsage[] =
    "usage: profsh kernels TRACE [--format table|csv]\n"
    "\n"
    "Prints PyProf's kernel table of TRACE: one row per kernel with the operator and layer that\n"
    "launched it, its parameters, silicon time (ns), tensor-core use, launch configuration, the\n"
    "operator's FLOPs and bytes, and the achieved TFLOP/s, GB/s and FLOP/B.\n";

int Fail(const char* command, const std::string& message) {
  std::fprintf(stderr, "profsh %s: %s\n", command, message.c_str());
  return 1;
}

void Print(const AnalysisRows& rows, const std::string& format) {
  std::string text = format == "csv" ? rows.FormatCsv() : rows.FormatTable();
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (format == "csv")
    for (const std::string& note : rows.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
}

}  // namespace

int RunStatsCommand(int argc, char** argv) {
  std::string input, report, format = "table";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--report" || a == "--format") {
      if (i + 1 >= argc) return Fail("stats", a + " needs a value");
      (a == "--report" ? report : format) = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      return Fail("stats", "unknown option " + a + "\n" + kUsage);
    } else if (input.empty()) {
      input = a;
    } else {
      return Fail("stats", "one trace at a time (got " + input + " and " + a + ")");
    }
  }
  if (input.empty()) return Fail("stats", std::string("no trace given\n") + kUsage);
  if (format != "table" && format != "csv")
    return Fail("stats", "unknown format '" + format + "' (table or csv)");
  std::vector<std::string> reports =
      report.empty() ? NsysReportNames() : std::vector<std::string>{report};
  // Check the report names before the work of loading.
  for (const std::string& r : reports) {
    const auto& known = NsysReportNames();
    if (std::find(known.begin(), known.end(), r) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return Fail("stats", "unknown report '" + r + "' (known: " + list + ")");
    }
  }
  auto trace = LoadTrace(input);
  if (!trace.ok()) return Fail("stats", trace.error().message);
  bool first = true;
  for (const std::string& r : reports) {
    auto rows = NsysStatsReport(*trace.value(), r);
    if (!rows.ok()) return Fail("stats", rows.error().message);
    if (reports.size() > 1) std::printf("%s ** %s:\n\n", first ? "" : "\n", r.c_str());
    first = false;
    Print(*rows, format);
  }
  return 0;
}

int RunKernelsCommand(int argc, char** argv) {
  std::string input, format = "table";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kKernelsUsage, stdout);
      return 0;
    }
    if (a == "--format") {
      if (i + 1 >= argc) return Fail("kernels", a + " needs a value");
      format = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      return Fail("kernels", "unknown option " + a + "\n" + kKernelsUsage);
    } else if (input.empty()) {
      input = a;
    } else {
      return Fail("kernels", "one trace at a time (got " + input + " and " + a + ")");
    }
  }
  if (input.empty()) return Fail("kernels", std::string("no trace given\n") + kKernelsUsage);
  if (format != "table" && format != "csv")
    return Fail("kernels", "unknown format '" + format + "' (table or csv)");
  auto trace = LoadTrace(input);
  if (!trace.ok()) return Fail("kernels", trace.error().message);
  Print(KernelTable(*trace.value()), format);
  return 0;
}

}  // namespace profsh::repl
