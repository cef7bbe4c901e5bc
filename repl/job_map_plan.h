// What `profsh job map` will do: one task per rank trace, each with the file its summary is
// written to before it is named by its rank (job_map_outputs.h).
#pragma once

#include <string>
#include <vector>

#include "engine/util/result.h"

namespace profsh::repl {

struct MapTask {
  std::string trace;    // absolute: Dask workers and child processes do not share our cwd
  std::string staging;  // OUT_DIR/.job-map-PID-K.partial, this run's own
};

// Creates OUT_DIR (and its parents) when missing. Traces are not opened here: with --dask they
// may exist only where the workers run.
Result<std::vector<MapTask>> PlanMap(const std::vector<std::string>& traces,
                                     const std::string& out_dir);

}  // namespace profsh::repl
