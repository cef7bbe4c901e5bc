#include "repl/flamegraph_command.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "engine/flamegraph/flame_svg.h"
#include "engine/flamegraph/speedscope.h"
#include "engine/flamegraph/trace_stacks.h"

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
    "  --minwidth N | N%     leave out frames narrower than N pixels (0.1) or N% of the total\n"
    "  --colors PALETTE      hot, mem, io, java, torch, red, green, blue, yellow, purple, aqua, "
    "orange\n"
    "  --reverse             an icicle graph (roots at the top)\n"
    "  --metric NAME         for traces: self_cpu_time_total (default), self_cuda_time_total,\n"
    "                        self_cpu_memory_usage, count\n"
    "  --stacks KIND         for traces: auto (default), python, operators\n";

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
  bool normalize = false, count_name_set = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* what) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "profsh flamegraph: %s needs %s\n", a.c_str(), what);
        std::exit(1);
      }
      return argv[++i];
    };
    auto number = [&](const char* what) -> double {
      std::string v = value(what);
      char* end = nullptr;
      double d = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0') {
        std::fprintf(stderr, "profsh flamegraph: %s needs %s, got '%s'\n", a.c_str(), what,
                     v.c_str());
        std::exit(1);
      }
      return d;
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-o" || a == "--output") {
      output = value("a file name");
    } else if (a == "--diff") {
      before = value("the BEFORE profile");
    } else if (a == "--normalize") {
      normalize = true;
    } else if (a == "--negate") {
      o.negate = true;
    } else if (a == "--speedscope") {
      speedscope = value("a file name");
    } else if (a == "--title") {
      o.title = value("a title");
    } else if (a == "--subtitle") {
      o.subtitle = value("a subtitle");
    } else if (a == "--countname") {
      o.count_name = value("a name");
      count_name_set = true;
    } else if (a == "--width") {
      o.width = static_cast<int>(number("a number of pixels"));
    } else if (a == "--height") {
      o.frame_height = static_cast<int>(number("a number of pixels"));
    } else if (a == "--minwidth") {
      std::string v = value("pixels or a percentage");
      if (!v.empty() && v.back() == '%') {
        o.min_width_percent = true;
        v.pop_back();
      }
      char* end = nullptr;
      o.min_width = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0') {
        std::fprintf(stderr, "profsh flamegraph: --minwidth needs pixels or a percentage\n");
        return 1;
      }
    } else if (a == "--colors") {
      o.colors = value("a palette");
    } else if (a == "--reverse") {
      o.reverse = true;
    } else if (a == "--metric") {
      s.metric = value("a metric");
    } else if (a == "--stacks") {
      std::string k = value("auto, python or operators");
      s.source = k == "python"      ? StackSource::kPython
                 : k == "operators" ? StackSource::kOperators
                                    : StackSource::kAuto;
      if (k != "python" && k != "operators" && k != "auto") {
        std::fprintf(stderr, "profsh flamegraph: --stacks takes auto, python or operators\n");
        return 1;
      }
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "profsh flamegraph: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 1;
    } else if (input.empty()) {
      input = a;
    } else {
      std::fprintf(stderr, "profsh flamegraph: more than one input ('%s' and '%s')\n",
                   input.c_str(), a.c_str());
      return 1;
    }
  }
  if (input.empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return 1;
  }
  if (output.empty()) output = DefaultOutput(input);
  if (!count_name_set && IsTraceFile(input)) o.count_name = MetricUnit(s.metric);

  auto after = StacksFromFile(input, s);
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
  std::printf("wrote %s: %zu stacks, %zu frames drawn, total %.17g %s", output.c_str(), r.stacks,
              r.frames_drawn, r.total, o.count_name.c_str());
  if (r.ignored_lines > 0)
    std::printf(" (%zu lines ignored: not \"stack count\")", r.ignored_lines);
  std::printf("\n");
  if (!speedscope.empty()) std::printf("wrote %s (speedscope)\n", speedscope.c_str());
  return 0;
}

}  // namespace profsh::repl
