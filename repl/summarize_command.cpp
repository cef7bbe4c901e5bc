#include "repl/summarize_command.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/load/trace_loader.h"
#include "engine/summary/summarize.h"
#include "repl/command_line.h"

namespace profsh::repl {

namespace {

constexpr char kUsage[] =
    "usage: profsh summarize TRACE... -o OUT [--rank N] [--top-operators N] [--top-kernels N]\n"
    "\n"
    "Writes each trace's rank summary: a small SQLite file (kilobytes to a few MB, whatever the\n"
    "trace's size) with its steps, per-step breakdowns, per-step top operators and kernels, its\n"
    "collectives and the clock anchors of every alignment, which profsh.load_summaries reduces\n"
    "without the traces (docs/ANALYSIS.md, \"Rank summaries\").\n"
    "\n"
    "One TRACE: OUT is the summary file. Several, or a trace whose processes are several ranks\n"
    "(a profsh run of a job): OUT is a folder (made if missing) that gets one\n"
    "rank-R.summary.sqlite per rank. A trace's rank is its distributedInfo.rank, else the\n"
    "rank-N in its name, else --rank N (one trace only).\n"
    "\n"
    "options:\n"
    "  -o, --output OUT      the summary file, or the folder for several traces\n"
    "  --rank N              the rank of a trace that names none\n"
    "  --top-operators N     operators kept per step, those with the most time (default 20)\n"
    "  --top-kernels N       kernels kept per step (default 20)\n";

}  // namespace

int RunSummarizeCommand(int argc, char** argv) {
  std::vector<std::string> inputs;
  std::string output;
  SummarizeOptions options;
  CommandLine cl("profsh summarize", argc, argv,
                 {"--output", "--rank", "--top-operators", "--top-kernels", "--help"});
  while (cl.Next()) {
    const std::string& a = cl.arg();
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "-o" || a == "--output") {
      output = cl.Value("a file or folder name");
    } else if (a == "--rank") {
      options.rank = cl.Number(0);
    } else if (a == "--top-operators") {
      options.top_operators = static_cast<size_t>(cl.Number(1));
    } else if (a == "--top-kernels") {
      options.top_kernels = static_cast<size_t>(cl.Number(1));
    } else if (cl.IsOption()) {
      cl.Unknown();
    } else {
      inputs.push_back(a);
    }
  }
  if (inputs.empty()) cl.Fail("no trace given");
  if (output.empty()) cl.Fail("no output given (-o OUT.sqlite, or -o FOLDER for several traces)");
  // The atomic writer would gzip it, and SQLite reads no gzip.
  if (output.size() > 3 && output.compare(output.size() - 3, 3, ".gz") == 0)
    cl.Fail("-o " + output + ": a summary is a plain SQLite file (no .gz)");
  if (options.rank && inputs.size() > 1)
    cl.Fail("--rank names the rank of one trace: give one trace with it");
  // One trace of one rank: OUT is its file. Otherwise OUT is a folder of rank-R files (a
  // trace whose processes are several ranks, a profsh run of a job, gives one per rank).
  const bool one_file = inputs.size() == 1 && !std::filesystem::is_directory(output);
  std::map<int32_t, std::string> done;  // rank -> trace
  int failed = 0;
  auto fail = [&](const std::string& message) {
    std::fprintf(stderr, "profsh summarize: %s\n", message.c_str());
    ++failed;
  };
  for (const std::string& path : inputs) {
    auto trace = LoadTrace(path);
    if (!trace.ok()) {
      fail(trace.error().message);
      continue;
    }
    const std::vector<int32_t> labelled = LabelledRanks(*trace.value());
    if (one_file && labelled.size() < 2) {
      auto rank = SummarizeTrace(*trace.value(), path, output, options);
      if (!rank.ok()) return CommandFailed("summarize", rank.error().message);
      std::fprintf(stderr, "profsh: rank %d of %s summarized in %s\n", rank.value(), path.c_str(),
                   output.c_str());
      return 0;
    }
    std::error_code ec;
    std::filesystem::create_directories(output, ec);
    if (ec || !std::filesystem::is_directory(output))
      return CommandFailed("summarize", output + ": cannot make this folder for the summaries" +
                                            (ec ? ": " + ec.message() : std::string()));
    std::vector<int32_t> ranks = labelled;
    if (labelled.size() < 2) {
      auto rank = SummaryRank(*trace.value(), path, options.rank);
      if (!rank.ok()) {
        fail(rank.error().message);
        continue;
      }
      ranks = {rank->first};
    }
    std::string twice;
    for (int32_t r : ranks) {
      if (auto it = done.find(r); it != done.end())
        twice = "rank " + std::to_string(r) + " twice: " + it->second + " and " + path;
    }
    if (!twice.empty()) {
      fail(twice);
      continue;
    }
    if (labelled.size() >= 2) {
      auto written = SummarizeEachRank(*trace.value(), path, output, options, "process labels");
      if (!written.ok()) {
        fail(written.error().message);
        continue;
      }
    } else {
      const std::string out = (std::filesystem::path(output) / SummaryFileName(ranks[0])).string();
      auto written = SummarizeTrace(*trace.value(), path, out, options);
      if (!written.ok()) {
        fail(written.error().message);
        continue;
      }
    }
    for (int32_t r : ranks) {
      done.emplace(r, path);
      std::fprintf(stderr, "profsh: rank %d of %s summarized in %s\n", r, path.c_str(),
                   (std::filesystem::path(output) / SummaryFileName(r)).string().c_str());
    }
  }
  if (failed > 0) {
    std::fprintf(stderr, "profsh summarize: %d of %zu traces not summarized\n", failed,
                 inputs.size());
    return 1;
  }
  return 0;
}

}  // namespace profsh::repl
