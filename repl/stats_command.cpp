#include "repl/stats_command.h"

#include <algorithm>
#include <cstdio>
#include <string>

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

int Fail(const std::string& message) {
  std::fprintf(stderr, "profsh stats: %s\n", message.c_str());
  return 1;
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
      if (i + 1 >= argc) return Fail(a + " needs a value");
      (a == "--report" ? report : format) = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      return Fail("unknown option " + a + "\n" + kUsage);
    } else if (input.empty()) {
      input = a;
    } else {
      return Fail("one trace at a time (got " + input + " and " + a + ")");
    }
  }
  if (input.empty()) return Fail(std::string("no trace given\n") + kUsage);
  if (format != "table" && format != "csv")
    return Fail("unknown format '" + format + "' (table or csv)");
  std::vector<std::string> reports =
      report.empty() ? NsysReportNames() : std::vector<std::string>{report};
  // Check the report names before the work of loading.
  for (const std::string& r : reports) {
    const auto& known = NsysReportNames();
    if (std::find(known.begin(), known.end(), r) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return Fail("unknown report '" + r + "' (known: " + list + ")");
    }
  }
  auto trace = LoadTrace(input);
  if (!trace.ok()) return Fail(trace.error().message);
  bool first = true;
  for (const std::string& r : reports) {
    auto rows = NsysStatsReport(*trace.value(), r);
    if (!rows.ok()) return Fail(rows.error().message);
    if (reports.size() > 1) std::printf("%s ** %s:\n\n", first ? "" : "\n", r.c_str());
    first = false;
    std::string text = format == "csv" ? rows->FormatCsv() : rows->FormatTable();
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (format == "csv")
      for (const std::string& note : rows->notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  }
  return 0;
}

}  // namespace profsh::repl
