// `profsh job map --local N`: the map on this machine, N `profsh summarize` processes at a time.
#pragma once

#include <vector>

#include "engine/util/result.h"
#include "repl/job_map_plan.h"
#include "repl/job_map_progress.h"

namespace profsh::repl {

// Runs `PROGRAM summarize TRACE -o SUMMARY` for every task, `processes` at a time; one that fails
// (non-zero exit, killed) is run again, up to `retries` more times, then reported to `progress`
// with the lines of its standard error that name the trace (else the last one). Fails only when no
// process can be started.
Status RunLocalMap(const std::string& program, const std::vector<MapTask>& tasks, int processes,
                   int retries, MapProgress* progress);

}  // namespace profsh::repl
