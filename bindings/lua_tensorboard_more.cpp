// The TensorBoard plugin's memory view in Lua: trace:memory_summary() (engine/analysis/
// tensorboard/memory_summary.h). Rows of per-operator statistics, with the curve, the
// allocations and the devices as named fields.
#include "bindings/lua_api.h"
#include "bindings/lua_support.h"
#include "engine/analysis/tensorboard/memory_summary.h"

namespace profsh::lua {

int TraceMemorySummary(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckUserdata<TraceHandle>(L, 1, "profsh.Trace", "memory_summary");
    Options opts(L, 2, "memory_summary", {});
    const tensorboard::MemorySummary summary = tensorboard::BuildMemorySummary(*h->trace);
    tensorboard::MemorySummaryRows rows = tensorboard::MemorySummaryAsRows(summary);
    PushRows(L, std::move(rows.operators),
             {{"curve", std::move(rows.curve)},
              {"allocations", std::move(rows.allocations)},
              {"devices", std::move(rows.devices)}});
    lua_pushstring(L, summary.default_device.c_str());
    lua_setfield(L, -2, "default_device");
    return 1;
  });
}

}  // namespace profsh::lua
