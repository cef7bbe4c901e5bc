#include "repl/diff_command.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/analysis/trace_diff.h"
#include "engine/load/trace_loader.h"
#include "repl/command_line.h"

namespace profsh::repl {

namespace {

constexpr char kUsage[] =
    "usage: profsh diff CONTROL TEST [--device all|cpu|gpu] [--step N|first|whole]\n"
    "                   [--control-step S] [--test-step S] [--by name|short_name]\n"
    "                   [--sort KEY] [--min-change N] [--row-limit N] [--format table|csv]\n"
    "\n"
    "Compares two traces as HTA's TraceDiff does: per operator or kernel name, its count and\n"
    "total duration (us) in CONTROL and TEST, the differences, HTA's counts_change_categories\n"
    "(+ - =) and the group of the change (added, deleted, increased, decreased, unchanged).\n"
    "Each trace takes part with one ProfilerStep: its first unless --step (both) or\n"
    "--control-step / --test-step name one; 'whole' compares the whole trace, as does a trace\n"
    "without steps. --device cpu counts events without a stream (operators, runtime calls,\n"
    "annotations), gpu those on a stream (kernels, copies, sets, GPU annotations).\n"
    "Rows come in HTA's order, by name. --sort orders them by a column instead: diff_duration\n"
    "or diff_counts by the size of the change (largest first, growth or shrinkage);\n"
    "control_total_duration, test_total_duration, control_counts, test_counts largest first.\n"
    "--min-change N leaves out the rows whose change is below N: |diff_counts| when sorting by\n"
    "a counts column, else |diff_duration| in us. --row-limit N shows the first N rows. The\n"
    "groups below the table count every name compared (HTA's groups follow the counts alone).\n"
    "The table cuts names at 80 characters; --format csv gives them whole.\n";

constexpr size_t kTableNameWidth = 80;

}  // namespace

int RunDiffCommand(int argc, char** argv) {
  std::string inputs[2], device = "all", by = "name", format = "table";
  std::string step = "first", control_step, test_step;
  DiffRowSelection selection;
  int given = 0;
  CommandLine cl("profsh diff", argc, argv,
                 {"--help", "--device", "--by", "--format", "--step", "--control-step",
                  "--test-step", "--sort", "--min-change", "--row-limit"});
  while (cl.Next()) {
    const std::string& a = cl.arg();
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--device") {
      device = cl.Value("all, cpu or gpu");
    } else if (a == "--by") {
      by = cl.Value("name or short_name");
    } else if (a == "--format") {
      format = cl.Value("table or csv");
    } else if (a == "--step" || a == "--control-step" || a == "--test-step") {
      (a == "--step"           ? step
       : a == "--control-step" ? control_step
                               : test_step) = cl.Value("a step number, first or whole");
    } else if (a == "--sort") {
      selection.sort = cl.Value("a column to sort by");
      if (Status s = CheckDiffSort(selection.sort); !s.ok()) cl.Fail(s.message());
    } else if (a == "--min-change") {
      const std::string v = cl.Value("a number");
      char* end = nullptr;
      selection.min_change = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(selection.min_change >= 0))
        cl.Fail("--min-change needs a number >= 0, got '" + v + "'");
    } else if (a == "--row-limit") {
      const std::string v = cl.Value("a count");
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || n < 0)
        cl.Fail("--row-limit needs a count >= 0, got '" + v + "'");
      selection.row_limit = static_cast<size_t>(n);
    } else if (cl.IsOption()) {
      cl.Unknown();
    } else if (given < 2) {
      inputs[given++] = a;
    } else {
      cl.Fail("two traces at a time (got a third: " + a + ")");
    }
  }
  if (given < 2) cl.Fail("needs two traces, CONTROL and TEST");
  if (format != "table" && format != "csv")
    cl.Fail("unknown format '" + format + "' (table or csv)");
  if (by != "name" && by != "short_name") cl.Fail("unknown --by '" + by + "' (name or short_name)");
  TraceDiffOptions options;
  auto parsed_device = ParseDiffDevice(device);
  if (!parsed_device.ok()) cl.Fail(parsed_device.error().message);
  options.device = *parsed_device;
  options.short_names = by == "short_name";
  auto both = ParseDiffStep(step);
  auto control = ParseDiffStep(control_step.empty() ? step : control_step);
  auto test = ParseDiffStep(test_step.empty() ? step : test_step);
  for (const auto* s : {&both, &control, &test})
    if (!s->ok()) cl.Fail(s->error().message);
  options.control_step = *control;
  options.test_step = *test;

  auto control_trace = LoadTrace(inputs[0]);
  if (!control_trace.ok()) {
    std::fprintf(stderr, "profsh diff: %s\n", control_trace.error().message.c_str());
    return 1;
  }
  auto test_trace = LoadTrace(inputs[1]);
  if (!test_trace.ok()) {
    std::fprintf(stderr, "profsh diff: %s\n", test_trace.error().message.c_str());
    return 1;
  }
  auto compared = DiffTraces(*control_trace.value(), *test_trace.value(), options);
  if (!compared.ok()) {
    std::fprintf(stderr, "profsh diff: %s\n", compared.error().message.c_str());
    return 1;
  }
  const AnalysisRows rows = SelectDiffRows(*compared, selection);
  if (format == "csv") {
    std::string text = rows.FormatCsv();
    std::fwrite(text.data(), 1, text.size(), stdout);
    for (const std::string& note : rows.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
    return 0;
  }
  // Kernel names run to thousands of characters; the table shortens them (CSV keeps them whole).
  AnalysisRows shown;
  shown.columns = rows.columns;
  shown.notes = rows.notes;
  for (size_t r = 0; r < rows.rows.size(); ++r) {
    std::vector<Cell> row = rows.rows[r];
    if (row[0].text.size() > kTableNameWidth)
      row[0].text = row[0].text.substr(0, kTableNameWidth - 3) + "...";
    shown.rows.push_back(row);
  }
  std::string text = shown.FormatTable();
  std::fwrite(text.data(), 1, text.size(), stdout);
  const size_t change = compared->Column("change");
  std::string summary;
  for (const char* group : kDiffGroups) {
    size_t n = 0;
    for (size_t r = 0; r < compared->rows.size(); ++r) n += compared->rows.text(r, change) == group;
    summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " " + group;
  }
  std::printf("\n%s\n", summary.c_str());
  return 0;
}

}  // namespace profsh::repl
