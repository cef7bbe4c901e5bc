// `profsh report TRACE... [-o OUT.html|OUT.md] [--template NAME|FILE.lua] [--title T]`: a report
// of traces from a report template (bindings/prelude/report.lua).
#pragma once

namespace profsh::repl {

int RunReportCommand(int argc, char** argv);

}  // namespace profsh::repl
