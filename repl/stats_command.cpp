#include "repl/stats_command.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "engine/analysis/kernel_table.h"
#include "engine/analysis/nsys_stats.h"
#include "engine/load/trace_loader.h"
#include "repl/command_line.h"

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

void Print(const AnalysisRows& rows, const std::string& format) {
  std::string text = format == "csv" ? rows.FormatCsv() : rows.FormatTable();
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (format == "csv")
    for (const std::string& note : rows.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
}

// What both commands take: a trace, --format, and (for stats) --report. Returns -1 to go on, or
// the exit status when the arguments were a help request or wrong.
struct Arguments {
  std::string input, report, format = "table";
};
int ParseArguments(const char* command, const char* usage, bool takes_report, int argc, char** argv,
                   Arguments* out) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      return 0;
    }
    if (a == "--format" || (takes_report && a == "--report")) {
      if (i + 1 >= argc) return CommandFailed(command, a + " needs a value");
      (a == "--report" ? out->report : out->format) = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      return CommandFailed(command, "unknown option " + a + "\n" + usage);
    } else if (out->input.empty()) {
      out->input = a;
    } else {
      return CommandFailed(command, "one trace at a time (got " + out->input + " and " + a + ")");
    }
  }
  if (out->input.empty()) return CommandFailed(command, std::string("no trace given\n") + usage);
  if (out->format != "table" && out->format != "csv")
    return CommandFailed(command, "unknown format '" + out->format + "' (table or csv)");
  return -1;
}

}  // namespace

int RunStatsCommand(int argc, char** argv) {
  Arguments args;
  if (int status = ParseArguments("stats", kUsage, true, argc, argv, &args); status >= 0)
    return status;
  std::vector<std::string> reports =
      args.report.empty() ? NsysReportNames() : std::vector<std::string>{args.report};
  // Check the report names before the work of loading.
  for (const std::string& r : reports) {
    const auto& known = NsysReportNames();
    if (std::find(known.begin(), known.end(), r) == known.end()) {
      std::string list;
      for (const auto& k : known) {
        if (!list.empty()) list += ", ";
        list += k;
      }
      return CommandFailed("stats", "unknown report '" + r + "' (known: " + list + ")");
    }
  }
  auto trace = LoadTrace(args.input);
  if (!trace.ok()) return CommandFailed("stats", trace.error().message);
  bool first = true;
  for (const std::string& r : reports) {
    auto rows = NsysStatsReport(*trace.value(), r);
    if (!rows.ok()) return CommandFailed("stats", rows.error().message);
    if (reports.size() > 1) std::printf("%s ** %s:\n\n", first ? "" : "\n", r.c_str());
    first = false;
    Print(*rows, args.format);
  }
  return 0;
}

int RunKernelsCommand(int argc, char** argv) {
  Arguments args;
  if (int status = ParseArguments("kernels", kKernelsUsage, false, argc, argv, &args); status >= 0)
    return status;
  auto trace = LoadTrace(args.input);
  if (!trace.ok()) return CommandFailed("kernels", trace.error().message);
  Print(KernelTable(*trace.value()), args.format);
  return 0;
}

}  // namespace profsh::repl
