#include "repl/trace_command.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/analysis/averages_table.h"
#include "engine/analysis/function_events.h"
#include "engine/io/paths.h"
#include "engine/load/trace_loader.h"
#include "engine/session/on_demand.h"
#include "engine/util/edit_distance.h"
#include "repl/command_line.h"

namespace profsh::repl {

namespace {

constexpr char kUsage[] =
    "usage: profsh trace --pid PID --steps N [options]\n"
    "       profsh trace --pid PID --dump [--timeout SECONDS]\n"
    "\n"
    "Records the next N steps of process PID, which profsh run --on-demand started (or one of its\n"
    "children), prints their operators table and saves the trace.\n"
    "\n"
    "--dump: PID runs under profsh run --flight-recorder; every process of that run dumps the\n"
    "same time span, its ring up to now, saved beside that run's -o (BASE.PID.N.profsh) as its\n"
    "triggers' dumps are; prints the saved paths, one a line.\n"
    "\n"
    "options:\n"
    "  -o, --output PATH     where to save the trace (default: profsh-PID-DATE-TIME.profsh here;\n"
    "                        a .json or .json.gz name writes Chrome JSON)\n"
    "  --timeout SECONDS     give up after this long (default: wait until the steps are done)\n"
    "  --sort-by KEY         the table's order (default: cpu_time_total)\n"
    "  --row-limit N         rows in the table (default: 25)\n"
    "  --no-table            print no table\n";

}  // namespace

int RunTraceCommand(int argc, char** argv) {
  long long pid = 0, steps = 0;
  double timeout = 0;
  std::string output;
  TableOptions table;
  table.sort_by = "cpu_time_total";
  table.row_limit = 25;
  bool print_table = true, dump = false;
  CommandLine cl("profsh trace", argc, argv,
                 {"--help", "--pid", "--steps", "--output", "--timeout", "--sort-by", "--row-limit",
                  "--no-table", "--dump"});
  while (cl.Next()) {
    const std::string& a = cl.arg();
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--pid") {
      pid = cl.Number(1);
    } else if (a == "--steps") {
      steps = cl.Number(1);
    } else if (a == "-o" || a == "--output") {
      output = cl.Value("a file name");
    } else if (a == "--timeout") {
      timeout = static_cast<double>(cl.Number(1));
    } else if (a == "--sort-by") {
      table.sort_by = cl.Value("a sort key");
      // Checked before the workload records anything: a typo must not cost the user their steps.
      if (!IsSortKey(*table.sort_by)) {
        std::string hint = ClosestName(*table.sort_by, SortKeys());
        cl.Fail("unknown --sort-by key '" + *table.sort_by + "'" +
                (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
      }
    } else if (a == "--row-limit") {
      table.row_limit = cl.Number(0);
    } else if (a == "--no-table") {
      cl.Flag();
      print_table = false;
    } else if (a == "--dump") {
      cl.Flag();
      dump = true;
    } else if (cl.IsOption()) {
      cl.Unknown();
    } else {
      cl.Fail("unexpected argument '" + a + "'");
    }
  }
  if (dump) {
    if (pid == 0) cl.Fail("--dump needs --pid PID");
    if (steps != 0 || !output.empty())
      cl.Fail(
          "--dump takes neither --steps nor -o: the run's flight recorder saves its dumps "
          "beside its own -o");
    auto paths = RequestFlightDump(pid, timeout);
    if (!paths.ok()) {
      std::fprintf(stderr, "profsh trace: %s\n", paths.error().message.c_str());
      return 1;
    }
    for (const std::string& p : paths.value()) std::printf("%s\n", p.c_str());
    std::fprintf(stderr, "profsh: %zu dump%s of the run of pid %lld saved\n", paths.value().size(),
                 paths.value().size() == 1 ? "" : "s", pid);
    return 0;
  }
  if (pid == 0 || steps == 0) cl.Fail("--pid and --steps are required");
  if (output.empty()) output = NewTracePath("profsh-" + std::to_string(pid));
  output = AbsolutePath(output);
  auto saved = RequestOnDemandTrace(pid, steps, output, timeout);
  if (!saved.ok()) {
    std::fprintf(stderr, "profsh trace: %s\n", saved.error().message.c_str());
    return 1;
  }
  auto trace = LoadTrace(saved.value());
  if (!trace.ok()) {
    std::fprintf(stderr, "profsh trace: %s\n", trace.error().message.c_str());
    return 1;
  }
  if (print_table) {
    auto averages = ComputeKeyAverages(BuildFunctionEvents(*trace.value()), false, 0);
    if (averages.rows.empty()) {
      std::printf("(nothing was recorded in those steps)\n");
    } else if (auto text = BuildAveragesTable(averages, table); text.ok()) {
      std::fputs(text.value().c_str(), stdout);
    } else {
      std::fprintf(stderr, "profsh trace: %s\n", text.error().message.c_str());
      return 2;
    }
  }
  const Trace& t = *trace.value();
  std::fprintf(stderr, "profsh: steps %lld-%lld of pid %lld saved to %s\n",
               static_cast<long long>(t.first_step), static_cast<long long>(t.last_step), pid,
               saved.value().c_str());
  return 0;
}

}  // namespace profsh::repl
