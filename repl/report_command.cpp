#include "repl/report_command.h"

#include <cstdio>
#include <string>
#include <vector>

#include "bindings/interpreter.h"
#include "repl/command_line.h"

namespace profsh::repl {

namespace {

constexpr char kUsage[] =
    "usage: profsh report TRACE... [-o OUT.html|OUT.md] [--template NAME|FILE.lua] [--title T]\n"
    "\n"
    "Writes a report of the traces: one self-contained HTML page (opens offline in any\n"
    "browser) or Markdown (for a pull request or a wiki; charts become tables, the flamegraph\n"
    "an SVG file beside it). The output's name picks which; report.html by default.\n"
    "\n"
    "Templates are Lua (profsh.report in the shell; README's Reports section). Built in:\n"
    "  summary  top operators, time by category, memory, flamegraph, timeline, warnings\n"
    "  gpu      temporal, idle and kernel breakdowns, overlap, top kernels, launch stats\n"
    "  compile  torch.compile regions, graph breaks, recompiles\n"
    "  ranks    per-rank bars and stragglers of a distributed job (one trace per rank)\n"
    "  diff     two traces: what grew, what shrank, the differential flamegraph\n"
    "--template NAME finds NAME.lua in the folders of $PROFSH_TEMPLATES (':'-separated)\n"
    "before the built-in ones; a path (FILE.lua) is used as it is.\n";

}  // namespace

int RunReportCommand(int argc, char** argv) {
  std::vector<std::string> traces;
  std::string output = "report.html", template_name, title;
  CommandLine cl("profsh report", argc, argv, {"--help", "--output", "--template", "--title"});
  while (cl.Next()) {
    const std::string& a = cl.arg();
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-o" || a == "--output") {
      output = cl.Value("an output file (.html or .md)");
    } else if (a == "--template" || a == "-t") {
      template_name = cl.Value("a template name or a FILE.lua");
    } else if (a == "--title") {
      title = cl.Value("a title");
    } else if (cl.IsOption()) {
      cl.Unknown();
    } else {
      traces.push_back(a);
    }
  }
  if (traces.empty()) cl.Fail("no trace given");

  return WriteReport(traces, output, template_name, title);
}

int WriteReport(const std::vector<std::string>& traces, const std::string& output,
                const std::string& template_name, const std::string& title) {
  std::string error;
  auto session = lua::Interpreter::Create(&error);
  if (!session) return CommandFailed("report", error);
  // The values reach Lua as arguments, never as code: arg[1] is the number of traces.
  std::vector<std::string> args{std::to_string(traces.size())};
  args.insert(args.end(), traces.begin(), traces.end());
  args.insert(args.end(), {template_name, output, title});
  session->SetArgs({"profsh"}, "report", args);
  const char* chunk = R"lua(
local n = tonumber(arg[1])
local traces = {}
for i = 1, n do traces[i] = arg[1 + i] end
local function given(s) if s ~= "" then return s end end
local ok, files = pcall(profsh.report, traces, {template = given(arg[n + 2]), output = arg[n + 3],
                                                 title = given(arg[n + 4])})
if not ok then
  -- An error object with __tostring is printed as it is, without a traceback (the message
  -- names the template's line already), and the caller goes on (profsh run cleans up).
  local message = tostring(files)
  message = (message:match("^report") and "profsh " or "profsh report: ") .. message
  error(setmetatable({}, {__tostring = function() return message end}))
end
io.stderr:write("profsh: report written to " .. table.concat(files, ", ") .. "\n")
)lua";
  return session->RunString(chunk, "=profsh report") == 0 ? 0 : 1;
}

}  // namespace profsh::repl
