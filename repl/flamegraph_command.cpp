#include "repl/flamegraph_command.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "engine/flamegraph/flame_svg.h"
#include "engine/flamegraph/speedscope.h"
#include "engine/flamegraph/trace_stacks.h"
#include "engine/util/human_text.h"
#include "repl/command_line.h"

namespace profsh::repl {

namespace {

constexpr char kUsage[] =
    "usage: profsh flamegraph INPUT [options]\n"
    "\n"
    "Draws INPUT as an interactive flamegraph SVG. INPUT is a folded-stack file (\"a;b;c 12\" per\n"
    "line: flamegraph.pl's stackcollapse output, inferno's, torch's export_stacks) or a trace\n"
    "profsh can load (its Python stacks, or the nesting of its operators).\n"
    "\n"
    "options:\n"
    "  -o, --output FILE     the SVG to write (default: INPUT's name with .svg, here)\n"
    "  --diff BEFORE         differential: INPUT is the new profile, BEFORE the old one\n"
    "  --normalize           with --diff: scale BEFORE to INPUT's total first\n"
    "  --negate              with --diff: swap red and blue\n"
    "  --speedscope FILE     also write the stacks in speedscope's JSON format\n"
    "  --title TEXT, --subtitle TEXT, --countname NAME\n"
    "  --width PIXELS (1200), --height PIXELS (16, per frame)\n"
    "  --minwidth N | N%     leave out frames narrower than N pixels or N% of the total (0.2%;\n"
    "                        flamegraph.pl keeps 0.1 pixel: --minwidth 0.1)\n"
    "  --colors PALETTE      hot, mem, io, java, torch, red, green, blue, yellow, purple, aqua, "
    "orange\n"
    "  --reverse             an icicle graph (roots at the top)\n"
    "  --metric NAME         for traces: self_cpu_time_total (default), self_cuda_time_total,\n"
    "                        self_cpu_memory_usage, count\n"
    "  --stacks KIND         for traces: auto (default), python, operators\n"
    "  --threads names|pids  for traces: a thread's frame is its name (and rank), or its name\n"
    "                        and pid (default: names with --diff, pids otherwise)\n";

std::string DefaultOutput(const std::string& input) {
  std::string base = input.substr(input.find_last_of('/') + 1);
  for (const char* ext : {".gz", ".folded", ".txt", ".json", ".profsh"}) {
    if (base.size() > std::strlen(ext) && base.ends_with(ext))
      base.resize(base.size() - std::strlen(ext));
  }
  return base + ".svg";
}

}  // namespace

int RunFlamegraphCommand(int argc, char** argv) {
  FlameOptions o;
  TraceStackOptions s;
  std::string input, output, before, speedscope;
  bool normalize = false, count_name_set = false, threads_by_pid = false, threads_given = false;
  CommandLine cl("profsh flamegraph", argc, argv,
                 {"--help", "--output", "--diff", "--normalize", "--negate", "--speedscope",
                  "--title", "--subtitle", "--countname", "--width", "--height", "--minwidth",
                  "--colors", "--reverse", "--metric", "--stacks", "--threads"});
  while (cl.Next()) {
    const std::string& a = cl.arg();
    auto number = [&](const char* what) -> double {
      const std::string option = a;
      std::string v = cl.Value(what);
      char* end = nullptr;
      double d = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0')
        cl.Fail(option + " needs " + what + ", got '" + v + "'");
      return d;
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-o" || a == "--output") {
      output = cl.Value("a file name");
    } else if (a == "--diff") {
      before = cl.Value("the BEFORE profile");
    } else if (a == "--normalize") {
      cl.Flag();
      normalize = true;
    } else if (a == "--negate") {
      cl.Flag();
      o.negate = true;
    } else if (a == "--speedscope") {
      speedscope = cl.Value("a file name");
    } else if (a == "--title") {
      o.title = cl.Value("a title");
    } else if (a == "--subtitle") {
      o.subtitle = cl.Value("a subtitle");
    } else if (a == "--countname") {
      o.count_name = cl.Value("a name");
      count_name_set = true;
    } else if (a == "--width") {
      o.width = static_cast<int>(number("a number of pixels"));
    } else if (a == "--height") {
      o.frame_height = static_cast<int>(number("a number of pixels"));
    } else if (a == "--minwidth") {
      std::string v = cl.Value("pixels or a percentage");
      o.min_width_percent = !v.empty() && v.back() == '%';
      if (o.min_width_percent) v.pop_back();
      char* end = nullptr;
      o.min_width = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0') cl.Fail("--minwidth needs pixels or a percentage");
    } else if (a == "--colors") {
      o.colors = cl.Value("a palette");
    } else if (a == "--reverse") {
      cl.Flag();
      o.reverse = true;
    } else if (a == "--metric") {
      s.metric = cl.Value("a metric");
    } else if (a == "--stacks") {
      std::string k = cl.Value("auto, python or operators");
      if (k != "python" && k != "operators" && k != "auto")
        cl.Fail("--stacks takes auto, python or operators, got '" + k + "'");
      s.source = k == "python"      ? StackSource::kPython
                 : k == "operators" ? StackSource::kOperators
                                    : StackSource::kAuto;
    } else if (a == "--threads") {
      std::string k = cl.Value("names or pids");
      if (k != "names" && k != "pids") cl.Fail("--threads takes names or pids, got '" + k + "'");
      threads_by_pid = k == "pids";
      threads_given = true;
    } else if (cl.IsOption()) {
      cl.Unknown();
    } else if (input.empty()) {
      input = a;
    } else {
      cl.Fail("more than one input ('" + input + "' and '" + a + "')");
    }
  }
  if (input.empty()) cl.Fail("no input given (profsh flamegraph INPUT [-o OUT.svg])");
  // Two runs of one program have other pids: a differential graph matches threads by name
  // (and rank) unless told otherwise, or every frame would be new.
  s.thread_frames = (threads_given ? threads_by_pid : before.empty()) ? ThreadFrames::kNameAndPid
                                                                      : ThreadFrames::kName;
  if (output.empty()) output = DefaultOutput(input);
  if (!count_name_set && IsTraceFile(input)) o.count_name = MetricUnit(s.metric);

  StackCoverage coverage;
  auto after = StacksFromFile(input, s, &coverage);
  if (!after.ok()) {
    std::fprintf(stderr, "profsh flamegraph: %s\n", after.error().message.c_str());
    return 1;
  }
  FoldedStacks stacks = std::move(after.value());
  if (!before.empty()) {
    auto old = StacksFromFile(before, s);
    if (!old.ok()) {
      std::fprintf(stderr, "profsh flamegraph: %s\n", old.error().message.c_str());
      return 1;
    }
    stacks = FoldedStacks::Difference(old.value(), stacks, normalize);
    if (o.title.empty()) o.title = "Differential Flame Graph";
  }
  if (!speedscope.empty()) {
    Status st = WriteSpeedscope(stacks, input, o.count_name, speedscope);
    if (!st.ok()) {
      std::fprintf(stderr, "profsh flamegraph: %s\n", st.message().c_str());
      return 1;
    }
  }
  auto summary = WriteFlamegraph(stacks, o, output);
  if (!summary.ok()) {
    std::fprintf(stderr, "profsh flamegraph: %s\n", summary.error().message.c_str());
    return 1;
  }
  const FlameSummary& r = summary.value();
  std::printf("wrote %s: %zu stacks, %zu frames drawn, total %s %s", output.c_str(), r.stacks,
              r.frames_drawn, HumanNumber(r.total).c_str(), o.count_name.c_str());
  if (r.ignored_lines > 0)
    std::printf(" (%zu lines ignored: not \"stack count\")", r.ignored_lines);
  std::printf("\n");
  if (before.empty()) {
    const std::string note = DescribeStackCoverage(coverage, o.count_name);
    if (!note.empty()) std::printf("note: %s\n", note.c_str());
  }
  if (!speedscope.empty()) std::printf("wrote %s (speedscope)\n", speedscope.c_str());
  return 0;
}

}  // namespace profsh::repl
