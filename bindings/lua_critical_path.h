// t:critical_path{...}: a CriticalPath userdata over the engine's graph and path
// (engine/analysis/critical_path). Declared here so that other binding files (what-if, the
// cross-rank path) can reach the graph of a CriticalPath value.
#pragma once

#include <memory>

extern "C" {
#include <lua.h>
}

#include "engine/analysis/critical_path/critical_path.h"
#include "engine/analysis/critical_path/job_path.h"
#include "engine/trace/trace.h"

namespace profsh::lua {

inline constexpr const char* kCriticalPathType = "profsh.CriticalPath";

struct CriticalPathHandle {
  std::shared_ptr<Trace> trace;
  std::shared_ptr<const CriticalPath> cp;  // job->cp
  std::shared_ptr<const JobCriticalPath> job;
};

// Pushes a CriticalPath userdata.
void PushCriticalPath(lua_State* L, std::shared_ptr<Trace> trace,
                      std::shared_ptr<const JobCriticalPath> job);
// t:critical_path{annotation=, instance=, rank=, data_load_events=, zero_weight_launch_edges=,
// rounding=, link_ranks=}
int TraceCriticalPath(lua_State* L);
// Registers the CriticalPath type (expects the profsh table on top of the stack).
void RegisterCriticalPath(lua_State* L);

}  // namespace profsh::lua
