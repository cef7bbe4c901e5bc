// `profsh critical-path TRACE [--step N] [--rank N] [--top N] [--edges] [--no-link]`: the
// critical path of a step (engine/analysis/critical_path/job_path.h), what bounds it and what
// its time goes to.
#pragma once

namespace profsh::repl {

int RunCriticalPathCommand(int argc, char** argv);

}  // namespace profsh::repl
