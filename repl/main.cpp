// The profsh command: the REPL on a terminal, or a script runner with the lua interpreter's
// conventions (profsh FILE.lua ARGS..., -e CHUNK, -i, -).
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bindings/interpreter.h"
#include "repl/build_info.h"
#include "repl/command_line.h"
#include "repl/critical_path_command.h"
#include "repl/diff_command.h"
#include "repl/flamegraph_command.h"
#include "repl/job_command.h"
#include "repl/overview_command.h"
#include "repl/repl.h"
#include "repl/report_command.h"
#include "repl/run_command.h"
#include "repl/serve_command.h"
#include "repl/sql_command.h"
#include "repl/stats_command.h"
#include "repl/summarize_command.h"
#include "repl/trace_command.h"

namespace {

constexpr char kUsage[] =
    "usage: profsh [options] [script.lua [args...]]\n"
    "\n"
    "Runs a Lua recipe with the profsh module, or the interactive shell when no script is\n"
    "given and standard input is a terminal.\n"
    "\n"
    "options:\n"
    "  -e CHUNK     run the Lua chunk CHUNK (may be repeated)\n"
    "  -i           enter the interactive shell after running the script or chunks\n"
    "  -            run standard input as a script\n"
    "  --           stop handling options; after -e, what follows is the chunk's arg[1], "
    "arg[2]...\n"
    "               (profsh -e 'print(profsh.load(arg[1]))' -- trace.json)\n"
    "  -h, --help   show this help\n"
    "  -v, --version  print the version, the commit and what the build contains\n"
    "\n"
    "commands:\n"
    "  profsh run [options] -- CMD [ARGS...]      run a workload with the collector attached\n"
    "                                             (profsh run --help for its options)\n"
    "  profsh trace --pid PID --steps N           record the next N steps of a workload started\n"
    "                                             with profsh run --on-demand\n"
    "  profsh flamegraph INPUT [-o OUT.svg] ...   a flamegraph of folded stacks or a trace\n"
    "                                             (profsh flamegraph --help for its options)\n"
    "  profsh stats TRACE [--report NAME]         Nsight Systems' stats reports of a trace\n"
    "        [--format table|csv]                 (profsh stats --help lists the reports)\n"
    "  profsh kernels TRACE [--format table|csv]  PyProf's kernel table of a trace\n"
    "  profsh critical-path TRACE [--step N]      a step's critical path: what bounds it, what\n"
    "                                             its time goes to (profsh critical-path --help)\n"
    "  profsh overview TRACE [--format table|csv] the TensorBoard plugin's overview: steps,\n"
    "                                             GPUs, top kernels, recommendations\n"
    "  profsh sql TRACE QUERY [--format csv]      one SQL query over a trace's tables\n"
    "                                             (Perfetto's names; profsh sql --help)\n"
    "  profsh export --sqlite OUT TRACE           the trace as a SQLite database\n"
    "  profsh diff CONTROL TEST [--device D]      HTA's TraceDiff: per name, counts and time\n"
    "        [--step N] [--format table|csv]      in each trace (profsh diff --help)\n"
    "  profsh report TRACE... [-o OUT.html|.md]   an HTML or Markdown report from a template\n"
    "        [--template NAME|FILE.lua]           (summary, gpu, compile, ranks, diff; profsh\n"
    "                                             report --help)\n"
    "  profsh serve LOGDIR [--port 6006]          the web UI over a folder of traces (profsh\n"
    "                                             serve --help)\n"
    "  profsh summarize TRACE... -o OUT           each rank's small summary file, reduced by\n"
    "                                             profsh.load_summaries (profsh summarize --help)\n"
    "  profsh job map (--dask ADDR | --local N)   per-rank summaries of a job's traces on a\n"
    "        TRACE... -o DIR                      Dask cluster or local processes (profsh job\n"
    "                                             map --help)\n"
    "\n"
    "In the shell, :help lists what profsh offers.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "run") == 0) {
    return profsh::repl::RunRunCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "trace") == 0) {
    return profsh::repl::RunTraceCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "kernels") == 0) {
    return profsh::repl::RunKernelsCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "stats") == 0) {
    return profsh::repl::RunStatsCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "critical-path") == 0) {
    return profsh::repl::RunCriticalPathCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "sql") == 0) {
    return profsh::repl::RunSqlCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "export") == 0) {
    return profsh::repl::RunExportCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "diff") == 0) {
    return profsh::repl::RunDiffCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "report") == 0) {
    return profsh::repl::RunReportCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "serve") == 0) {
    return profsh::repl::RunServeCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "flamegraph") == 0) {
    return profsh::repl::RunFlamegraphCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "overview") == 0) {
    return profsh::repl::RunOverviewCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "job") == 0) {
    return profsh::repl::RunJobCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "summarize") == 0) {
    return profsh::repl::RunSummarizeCommand(argc - 1, argv + 1);
  }
  std::vector<std::string> chunks;
  bool interactive = false;
  int script_index = -1;
  int chunk_args_index = -1;  // -e CHUNK -- ARGS: ARGS are the chunks' arg[1..]
  profsh::repl::CommandLine cl("profsh", argc, argv,
                               {"--help", "--version", "-e", "-i", "-h", "-v"});
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      if (!chunks.empty()) {
        chunk_args_index = i + 1;
      } else if (i + 1 < argc) {
        script_index = i + 1;
      }
      break;
    }
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "-v" || a == "--version") {
      std::fputs(profsh::repl::BuildDescription().c_str(), stdout);
      return 0;
    }
    if (a == "-i") {
      interactive = true;
      continue;
    }
    if (a == "-e") {
      if (i + 1 >= argc) cl.Fail("-e needs a Lua chunk");
      chunks.push_back(argv[++i]);
      continue;
    }
    if (a.size() > 1 && a[0] == '-') {
      if (a.size() > 2 && a[1] != '-') {
        cl.Fail("unknown option '" + a + "' (options are given one by one: -e CHUNK -i)");
      }
      cl.Unknown(a);
    }
    script_index = i;
    break;
  }

  std::string error;
  auto session = profsh::lua::Interpreter::Create(&error);
  if (!session) {
    std::fprintf(stderr, "profsh: %s\n", error.c_str());
    return 1;
  }
  // arg[0] is the script (the program itself when there is none); the interpreter and its
  // options get negative indices, as in the lua interpreter.
  std::vector<std::string> before;
  std::string script = argv[0];
  std::vector<std::string> script_args;
  if (script_index >= 0) {
    for (int i = 0; i < script_index; ++i) before.push_back(argv[i]);
    script = argv[script_index];
    for (int i = script_index + 1; i < argc; ++i) script_args.push_back(argv[i]);
  } else if (chunk_args_index >= 0) {
    for (int i = 1; i < chunk_args_index; ++i) before.push_back(argv[i]);
    for (int i = chunk_args_index; i < argc; ++i) script_args.push_back(argv[i]);
  }
  session->SetArgs(before, script, script_args);

  for (const auto& chunk : chunks) {
    if (session->RunString(chunk, "=(command line)") != 0) return 1;
  }
  if (script_index >= 0) {
    if (session->RunFile(script, script_args) != 0) return 1;
  }
  bool ran_something = script_index >= 0 || !chunks.empty();
  if (interactive || (!ran_something && isatty(STDIN_FILENO))) {
    return profsh::repl::RunRepl(*session);
  }
  if (!ran_something) return session->RunFile("-", {});
  return 0;
}
