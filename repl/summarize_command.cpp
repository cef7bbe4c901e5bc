#include "repl/summarize_command.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

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
    "One TRACE: OUT is the summary file. Several: OUT is a folder (made if missing) that gets\n"
    "one rank-R.summary.sqlite per rank. A trace's rank is its distributedInfo.rank, else the\n"
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
  if (options.rank && inputs.size() > 1)
    cl.Fail("--rank names the rank of one trace: give one trace with it");
  if (inputs.size() == 1) {
    auto rank = SummarizeTraceFile(inputs[0], output, options);
    if (!rank.ok()) return CommandFailed("summarize", rank.error().message);
    std::fprintf(stderr, "profsh: rank %d of %s summarized in %s\n", rank.value(),
                 inputs[0].c_str(), output.c_str());
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(output, ec);
  if (ec || !std::filesystem::is_directory(output))
    return CommandFailed("summarize", output + ": cannot make this folder for the summaries" +
                                          (ec ? ": " + ec.message() : std::string()));
  // Each trace is written under a name of its own first: the rank is known only once it is
  // loaded, and two traces of one rank must not overwrite each other.
  std::map<int32_t, std::string> done;
  int failed = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string staging =
        (std::filesystem::path(output) / (".summarizing-" + std::to_string(k) + ".sqlite"))
            .string();
    auto rank = SummarizeTraceFile(inputs[k], staging, options);
    if (!rank.ok()) {
      std::fprintf(stderr, "profsh summarize: %s\n", rank.error().message.c_str());
      ++failed;
      continue;
    }
    auto [it, fresh] = done.emplace(rank.value(), inputs[k]);
    if (!fresh) {
      std::filesystem::remove(staging, ec);
      std::fprintf(stderr, "profsh summarize: rank %d twice: %s and %s\n", rank.value(),
                   it->second.c_str(), inputs[k].c_str());
      ++failed;
      continue;
    }
    const std::string final_path =
        (std::filesystem::path(output) / SummaryFileName(rank.value())).string();
    std::filesystem::rename(staging, final_path, ec);
    if (ec) {
      std::fprintf(stderr, "profsh summarize: %s: %s\n", final_path.c_str(), ec.message().c_str());
      ++failed;
      continue;
    }
    std::fprintf(stderr, "profsh: rank %d of %s summarized in %s\n", rank.value(),
                 inputs[k].c_str(), final_path.c_str());
  }
  if (failed > 0) {
    std::fprintf(stderr, "profsh summarize: %d of %zu traces not summarized\n", failed,
                 inputs.size());
    return 1;
  }
  return 0;
}

}  // namespace profsh::repl
