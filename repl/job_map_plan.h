// What `profsh job map` will do: one task per rank trace, each with the summary file it makes.
#pragma once

#include <string>
#include <vector>

#include "engine/util/result.h"

namespace profsh::repl {

struct MapTask {
  std::string trace;    // absolute: Dask workers and child processes do not share our cwd
  std::string summary;  // OUT_DIR/NAME.sqlite
};

// The summary of TRACE is named after its file: rank-3.json.gz -> rank-3.sqlite (".gz" and then
// ".json" dropped). Two traces that would make the same summary are an error naming both.
// Creates OUT_DIR (and its parents) when missing. Traces are not opened here: with --dask they
// may exist only where the workers run.
Result<std::vector<MapTask>> PlanMap(const std::vector<std::string>& traces,
                                     const std::string& out_dir);

// The summary file name of a trace path (the rule above).
std::string SummaryName(const std::string& trace);

}  // namespace profsh::repl
