// The TensorBoard plugin's memory and module views in Lua: trace:memory_summary() (rows of
// per-operator statistics, with the curve, the allocations and the devices as named fields) and
// trace:module_summary() (the nn.Module tree in pre-order); engine/analysis/tensorboard/.
#include "bindings/lua_api.h"
#include "bindings/lua_support.h"
#include "engine/analysis/tensorboard/memory_summary.h"
#include "engine/analysis/tensorboard/module_summary.h"

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

int TraceModuleSummary(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckUserdata<TraceHandle>(L, 1, "profsh.Trace", "module_summary");
    Options opts(L, 2, "module_summary", {});
    PushRows(L, tensorboard::ModuleSummaryRows(tensorboard::BuildModuleSummary(*h->trace)), {});
    return 1;
  });
}

}  // namespace profsh::lua
