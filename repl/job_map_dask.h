// `profsh job map --dask ADDRESS`: the map on an existing Dask cluster, through the Python driver
// shipped with profsh (repl/profsh_job_map.py, installed as lib/profsh/python/profsh_job_map.py).
#pragma once

#include <string>
#include <vector>

#include "engine/util/result.h"
#include "repl/job_map_plan.h"
#include "repl/job_map_progress.h"

namespace profsh::repl {

struct DaskMapOptions {
  std::string scheduler;                    // the scheduler's address (tcp://host:8786)
  std::string python = "/usr/bin/python3";  // with Debian's python3-distributed
  std::string worker_profsh;                // the profsh program the workers run
  int retries = 2;
  int worker_timeout_s = 60;  // how long the driver waits for a first worker
};

// The driver beside this program: ./python/profsh_job_map.py in a build tree,
// ../lib/profsh/python/profsh_job_map.py in an installed or unpacked bundle.
Result<std::string> FindDaskDriver();

// Runs the driver and reports each rank it finishes to `progress`. Fails when the driver cannot
// start or says the map could not start (its message is then on standard error already).
Status RunDaskMap(const DaskMapOptions& options, const std::vector<MapTask>& tasks,
                  MapProgress* progress);

}  // namespace profsh::repl
