#include "repl/stats_command.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

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

// What both commands take: a trace, --format, and (for stats) --report.
struct Arguments {
  std::string input, report, format = "table";
};
// With the shared command-line conventions (`--opt=value`, "did you mean", usage errors exit 2).
// Returns the exit status when the command is done (a help request), -1 to go on.
int ParseArguments(const char* command, const char* usage, bool takes_report, int argc, char** argv,
                   Arguments* out) {
  std::vector<std::string> options = {"--format", "--help"};
  if (takes_report) options.push_back("--report");
  CommandLine cl(std::string("profsh ") + command, argc, argv, options);
  while (cl.Next()) {
    const std::string& a = cl.arg();
    if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      return 0;
    }
    if (a == "--format") {
      out->format = cl.Value("table or csv");
    } else if (takes_report && a == "--report") {
      out->report = cl.Value("a report name");
    } else if (cl.IsOption()) {
      cl.Unknown();
    } else if (out->input.empty()) {
      out->input = a;
    } else {
      cl.Fail("one trace at a time (got " + out->input + " and " + a + ")");
    }
  }
  if (out->input.empty()) cl.Fail("no trace given");
  if (out->format != "table" && out->format != "csv")
    cl.Fail("unknown format '" + out->format + "' (table or csv)");
  if (!out->report.empty()) {
    // Checked before the work of loading.
    const auto& known = NsysReportNames();
    if (std::find(known.begin(), known.end(), out->report) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      cl.Fail("unknown report '" + out->report + "' (known: " + list + ")");
    }
  }
  return -1;
}

}  // namespace

int RunStatsCommand(int argc, char** argv) {
  Arguments args;
  if (int status = ParseArguments("stats", kUsage, true, argc, argv, &args); status >= 0)
    return status;
  std::vector<std::string> reports =
      args.report.empty() ? NsysReportNames() : std::vector<std::string>{args.report};
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
