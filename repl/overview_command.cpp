#include "repl/overview_command.h"

#include <cstdio>
#include <string>

#include "engine/analysis/tensorboard/overview.h"
#include "engine/load/trace_loader.h"
#include "repl/command_line.h"

namespace profsh::repl {

namespace {

constexpr char kUsage[] =
    "usage: profsh overview TRACE [--format table|csv] [--kernels N]\n"
    "\n"
    "Prints the TensorBoard profiler plugin's overview of TRACE (any trace profsh loads): the\n"
    "time of each step by category and their average (µs), the GPU summary, the N kernels with\n"
    "the most time (10 by default) and the recommendations, the plugin's and profsh's own.\n";

void Print(const char* title, const AnalysisRows& rows, const std::string& format, bool first) {
  std::printf("%s** %s:\n\n", first ? "" : "\n", title);
  const std::string text = format == "csv" ? rows.FormatCsv() : rows.FormatTable();
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (format == "csv")
    for (const std::string& note : rows.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
}

}  // namespace

int RunOverviewCommand(int argc, char** argv) {
  std::string input, format = "table";
  long long kernels = 10;
  CommandLine cl("profsh overview", argc, argv, {"--format", "--kernels", "--help"});
  while (cl.Next()) {
    const std::string& a = cl.arg();
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--format") {
      format = cl.Value("table or csv");
    } else if (a == "--kernels") {
      kernels = cl.Number(1);
    } else if (cl.IsOption()) {
      cl.Unknown();
    } else if (input.empty()) {
      input = a;
    } else {
      cl.Fail("one trace at a time (got " + input + " and " + a + ")");
    }
  }
  if (input.empty()) cl.Fail("no trace given");
  if (format != "table" && format != "csv")
    cl.Fail("unknown format '" + format + "' (table or csv)");
  auto trace = LoadTrace(input);
  if (!trace.ok()) return CommandFailed("overview", trace.error().message);
  OverviewOptions options;
  options.top_kernels = static_cast<size_t>(kernels);
  const Overview o = ComputeOverview(*trace.value(), options);
  Print("step time breakdown (us)", o.steps, format, true);
  Print("average step time (us)", o.average, format, false);
  Print("GPU summary", o.gpus, format, false);
  Print("top kernels (us)", o.kernels, format, false);
  Print("recommendations", o.recommendations, format, false);
  return 0;
}

}  // namespace profsh::repl
