#include "repl/job_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "repl/command_line.h"
#include "repl/job_map_dask.h"
#include "repl/job_map_local.h"
#include "repl/job_map_plan.h"
#include "repl/job_map_progress.h"
#include "repl/job_reduce.h"

namespace profsh::repl {

namespace {

constexpr char kUsage[] =
    "usage: profsh job map (--dask SCHEDULER_ADDRESS | --local N) TRACE... -o DIR\n"
    "        [--retries N] [--python PATH] [--worker-profsh PATH] [--worker-timeout SECONDS]\n"
    "        [--no-reduce]\n"
    "\n"
    "Summarizes each trace of a distributed job with `profsh summarize`, one task per trace,\n"
    "into DIR/rank-R.summary.sqlite (R: the trace's rank, as profsh summarize TRACE... -o DIR\n"
    "names them; a trace whose processes are several ranks, a profsh run of a job, gives one\n"
    "file per rank; a rank found in two traces is an error naming both):\n"
    "  --dask ADDRESS  on an existing Dask cluster (tcp://host:8786), through the driver\n"
    "                  shipped with profsh (lib/profsh/python/profsh_job_map.py), run by\n"
    "                  /usr/bin/python3 with Debian's python3-distributed. Each worker must see\n"
    "                  the trace at the path given here (relative paths are made absolute\n"
    "                  here) and run profsh at --worker-profsh (default: this program's path);\n"
    "                  the summaries come back to DIR on this machine. A scheduler that no\n"
    "                  worker joins within --worker-timeout seconds (default 60) is an error.\n"
    "  --local N       N processes on this machine.\n"
    "A trace that fails (an error, a lost worker, a killed process) is run again up to --retries\n"
    "times (default 2), then reported with its last message; the other traces are summarized.\n"
    "Exit status 0 when every trace was summarized, 1 otherwise, 2 for usage errors.\n"
    "Then the reduce runs here: profsh.load_summaries over the summaries this map wrote (the\n"
    "ranks that failed left out) and the job's straggler, slowest rank per step and drifting\n"
    "ranks on standard output (--no-reduce: not).\n"
    "\n"
    "Any scheduler can make the same files: a Slurm job array or xargs -P running\n"
    "`profsh summarize` per rank (README, \"Jobs bigger than one machine\").\n";

std::string ThisProgram() {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  return n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string();
}

int RunMap(int argc, char** argv) {
  DaskMapOptions dask;
  long long processes = 0;
  std::string out_dir;
  std::vector<std::string> traces;
  bool dask_only_option = false;
  bool reduce = true;
  CommandLine cl("profsh job map", argc, argv,
                 {"--help", "--dask", "--local", "-o", "--output", "--retries", "--python",
                  "--worker-profsh", "--worker-timeout", "--no-reduce"});
  while (cl.Next()) {
    const std::string& a = cl.arg();
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--dask") {
      dask.scheduler = cl.Value("the Dask scheduler's address (tcp://host:8786)");
    } else if (a == "--local") {
      processes = cl.Number(1);
    } else if (a == "-o" || a == "--output") {
      out_dir = cl.Value("a folder for the summaries");
    } else if (a == "--retries") {
      dask.retries = static_cast<int>(std::min(cl.Number(0), 100LL));
    } else if (a == "--no-reduce") {
      cl.Flag();
      reduce = false;
    } else if (a == "--python") {
      dask.python = cl.Value("a Python interpreter");
      dask_only_option = true;
    } else if (a == "--worker-timeout") {
      dask.worker_timeout_s = static_cast<int>(std::min(cl.Number(1), 86400LL));
      dask_only_option = true;
    } else if (a == "--worker-profsh") {
      dask.worker_profsh = cl.Value("the profsh program's path on the workers");
      dask_only_option = true;
    } else if (a == "--") {
      while (cl.Next()) traces.push_back(cl.arg());
    } else if (cl.IsOption()) {
      cl.Unknown();
    } else {
      traces.push_back(a);
    }
  }
  if (dask.scheduler.empty() == (processes == 0))
    cl.Fail("say where the map runs: --dask SCHEDULER_ADDRESS or --local N (one of them)");
  if (processes > 0 && dask_only_option)
    cl.Fail("--python, --worker-profsh and --worker-timeout are options of --dask");
  if (out_dir.empty()) cl.Fail("no -o DIR for the summaries");
  if (traces.empty()) cl.Fail("no TRACE given (one per rank)");

  auto tasks = PlanMap(traces, out_dir);
  if (!tasks.ok()) return CommandFailed("job map", tasks.error().message);
  std::string program = ThisProgram();
  if (program.empty()) return CommandFailed("job map", "cannot find the profsh executable");
  MapProgress progress(*tasks, dask.retries);
  Status started;
  if (processes > 0) {
    started = RunLocalMap(program, *tasks, static_cast<int>(processes), dask.retries, &progress);
  } else {
    if (dask.worker_profsh.empty()) dask.worker_profsh = program;
    started = RunDaskMap(dask, *tasks, &progress);
  }
  if (!started.ok()) {
    progress.Abandon();
    return CommandFailed("job map", started.message());
  }
  int status = progress.Finish();
  if (reduce && progress.done() > 0 && ReduceSummaries(progress.placed(), out_dir) != 0) return 1;
  return status;
}

}  // namespace

int RunJobCommand(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "map") == 0) return RunMap(argc - 1, argv + 1);
  if (argc > 1 && (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "profsh job: %s\n%s",
               argc > 1 ? ("unknown verb '" + std::string(argv[1]) + "'").c_str() : "no verb given",
               "(profsh job map --help: the only verb, per-rank summaries of a job's traces)\n");
  return kUsageError;
}

}  // namespace profsh::repl
