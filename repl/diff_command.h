// `profsh diff CONTROL TEST [options]`: HTA's TraceDiff of two traces (engine/analysis/trace_diff).
#pragma once

namespace profsh::repl {

int RunDiffCommand(int argc, char** argv);

}  // namespace profsh::repl
