// `profsh report TRACE... [-o OUT.html|OUT.md] [--template NAME|FILE.lua] [--title T]`: a report
// of traces from a report template (bindings/prelude/report.lua).
#pragma once

#include <string>
#include <vector>

namespace profsh::repl {

int RunReportCommand(int argc, char** argv);
// What the command does once its arguments are read (also `profsh run --report`): 0 when the
// report was written, 1 (the error on stderr) when not.
int WriteReport(const std::vector<std::string>& traces, const std::string& output,
                const std::string& template_name, const std::string& title);

}  // namespace profsh::repl
