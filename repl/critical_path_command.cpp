#include "repl/critical_path_command.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "engine/analysis/critical_path/job_path.h"
#include "engine/analysis/ranks.h"
#include "engine/load/rank_loader.h"
#include "engine/load/trace_loader.h"
#include "repl/command_line.h"

namespace profsh::repl {

namespace {

constexpr char kUsage[] =
    "usage: profsh critical-path TRACE... [--step N|all] [--rank N] [--top N] [--edges]\n"
    "                            [--no-link]\n"
    "\n"
    "Prints the critical path of one step of TRACE (HTA's critical path analysis): its length,\n"
    "what bounds it (cpu_bound, gpu_compute_bound, gpu_communication_bound, launch and\n"
    "kernel-to-kernel overheads) and the operators and kernels its time goes to.\n"
    "\n"
    "  --step N     the step ProfilerStep#N (default: the first step; all: every step)\n"
    "  --rank N     a trace of several ranks: the path that ends on rank N (default: the job's)\n"
    "  --top N      how many contributors to print (default 10, 0 for all)\n"
    "  --edges      also print every edge of the path\n"
    "  --no-link    a trace of several ranks: rank N's graph alone, as HTA sees one rank\n"
    "\n"
    "Several TRACEs are a job's ranks, loaded as profsh.load_ranks loads them. On a job (or a\n"
    "trace of several ranks) the ranks' graphs are linked at their collectives: the path can run\n"
    "through the rank the others waited for.\n";

struct Arguments {
  std::vector<std::string> inputs;
  std::optional<long long> step;  // ProfilerStep#N
  bool all_steps = false;
  std::optional<long long> rank;
  long long top = 10;
  bool edges = false, link = true;
};

int Parse(int argc, char** argv, Arguments* out) {
  CommandLine cl("profsh critical-path", argc, argv,
                 {"--step", "--rank", "--top", "--edges", "--no-link", "--help"});
  while (cl.Next()) {
    const std::string& a = cl.arg();
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--step") {
      const std::string v = cl.Value("a step number or all");
      if (v == "all") {
        out->all_steps = true;
      } else {
        char* end = nullptr;
        const long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 0)
          cl.Fail("--step takes a step number (ProfilerStep#N) or all, not '" + v + "'");
        out->step = n;
      }
    } else if (a == "--rank") {
      out->rank = cl.Number(0);
    } else if (a == "--top") {
      out->top = cl.Number(0);
    } else if (a == "--edges") {
      cl.Flag();
      out->edges = true;
    } else if (a == "--no-link") {
      cl.Flag();
      out->link = false;
    } else if (cl.IsOption()) {
      cl.Unknown();
    } else {
      out->inputs.push_back(a);
    }
  }
  if (out->inputs.empty()) cl.Fail("no trace given");
  return -1;
}

// The ProfilerStep instances of one rank, counted as the analysis counts them (CPU side only,
// in trace order), so that --step N and the printed names are the steps the window covers.
std::vector<std::string> StepNames(const Trace& trace, std::optional<int32_t> rank) {
  const std::vector<int32_t> rank_of_track = RankOfTrack(trace);
  if (!rank) {
    const std::vector<int32_t> ranks = RanksOf(rank_of_track);
    if (!ranks.empty()) rank = ranks.front();
  }
  std::vector<std::string> names;
  for (size_t ev : AnnotationInstances(trace, rank_of_track, rank, "ProfilerStep"))
    names.emplace_back(trace.str(trace.events.name(ev)));
  return names;
}

void Print(const AnalysisRows& rows) {
  AnalysisRows quiet = rows;
  quiet.notes.clear();
  const std::string text = quiet.FormatTable();
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace

int RunCriticalPathCommand(int argc, char** argv) {
  Arguments args;
  if (int status = Parse(argc, argv, &args); status >= 0) return status;
  std::unique_ptr<Trace> loaded;
  if (args.inputs.size() == 1) {
    auto one = LoadTrace(args.inputs.front());
    if (!one.ok()) return CommandFailed("critical-path", one.error().message);
    loaded = std::move(one.value());
  } else {
    RankLoadOptions ranks;
    ranks.paths = args.inputs;
    auto job = LoadRanks(ranks);
    if (!job.ok()) return CommandFailed("critical-path", job.error().message);
    loaded = std::move(job->trace);
  }
  const Trace& trace = *loaded;
  const std::string input = args.inputs.size() == 1
                                ? args.inputs.front()
                                : std::to_string(args.inputs.size()) + " ranks' traces";
  JobCriticalPathOptions options;
  options.link_ranks = args.link;
  if (args.rank) options.path.rank = static_cast<int32_t>(*args.rank);
  const std::vector<std::string> steps = StepNames(trace, options.path.rank);
  std::string what;
  if (steps.empty()) {
    if (args.step) return CommandFailed("critical-path", input + " has no ProfilerStep#N range");
    options.path.annotation = "";
    what = "the whole trace (it has no ProfilerStep#N range)";
  } else if (args.all_steps) {
    options.path.first_instance = 0;
    options.path.last_instance = static_cast<int64_t>(steps.size()) - 1;
    what = "every step (" + steps.front() + " to " + steps.back() + ")";
  } else {
    size_t instance = 0;
    if (args.step) {
      const std::string wanted = "ProfilerStep#" + std::to_string(*args.step);
      instance = steps.size();
      for (size_t i = 0; i < steps.size() && instance == steps.size(); ++i)
        if (steps[i] == wanted) instance = i;
      if (instance == steps.size())
        return CommandFailed("critical-path", input + " has no " + wanted + " (its steps: " +
                                                  steps.front() + " to " + steps.back() + ")");
    }
    options.path.first_instance = options.path.last_instance = static_cast<int64_t>(instance);
    what = steps[instance];
  }
  auto job = AnalyzeJobCriticalPath(trace, options);
  if (!job.ok()) return CommandFailed("critical-path", job.error().message);
  const CriticalPath& cp = job->cp;
  std::printf("critical path of %s, %s: %.3f us of %.3f us", input.c_str(), what.c_str(),
              CriticalPathMicroseconds(cp.path),
              static_cast<double>(cp.window_end - cp.window_start) / 1000.0);
  if (job->linked) {
    std::printf(", %zu ranks linked at %zu collective(s), ending on rank %d",
                job->layout.parts.size(), job->layout.linked_collectives, cp.rank);
  } else if (job->layout.parts.size() == 1) {
    std::printf(", rank %d", cp.rank);
  }
  std::printf("\n\nbound by:\n");
  Print(JobSummary(*job, cp.path));
  std::printf("\ntop contributors:\n");
  Print(TopContributors(trace, *job, cp.path, static_cast<size_t>(args.top)));
  if (args.edges) {
    std::printf("\nedges:\n");
    Print(JobBreakdown(trace, *job, cp.path));
  }
  for (const std::string& note : cp.notes) std::printf("note: %s\n", note.c_str());
  return 0;
}

}  // namespace profsh::repl
