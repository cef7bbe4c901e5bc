// The TensorBoard plugin's memory, distributed and module views in Lua: trace:memory_summary()
// (rows of per-operator statistics, with the curve, the allocations and the devices as named
// fields), trace:distributed_summary() (rows per worker and step, with the collectives' figures
// as .ops; the workers are a multi-rank trace's ranks) and trace:module_summary() (the
// nn.Module tree in pre-order); engine/analysis/tensorboard/.
#include "bindings/lua_api.h"
#include "bindings/lua_ranks.h"
#include "bindings/lua_support.h"
#include "engine/analysis/tensorboard/distributed_workers.h"
#include "engine/analysis/tensorboard/memory_summary.h"
#include "engine/analysis/tensorboard/module_summary.h"
#include "engine/load/rank_loader.h"

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

int TraceDistributedSummary(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckUserdata<TraceHandle>(L, 1, "profsh.Trace", "distributed_summary");
    Options opts(L, 2, "distributed_summary", {});
    std::vector<tensorboard::DistributedWorker> workers;
    const std::vector<RankPart>& parts = RankParts(h);
    if (parts.empty()) {
      workers.push_back(tensorboard::DistributedWorkerOf(
          *h->trace, tensorboard::PluginWorkerName(h->trace->source_path)));
    }
    for (const RankPart& part : parts) {
      // The plugin names a worker by its file; a rank loaded from its own file keeps that name.
      std::string name = "rank " + std::to_string(part.rank);
      if (h->rank_info)
        for (const RankSource& s : h->rank_info->ranks)
          if (s.rank == part.rank && !s.path.empty()) name = tensorboard::PluginWorkerName(s.path);
      workers.push_back(tensorboard::DistributedWorkerOf(*part.trace, std::move(name)));
    }
    tensorboard::DistributedSummaryRows rows = tensorboard::DistributedSummaryAsRows(
        tensorboard::BuildDistributedSummary(std::move(workers)));
    PushRows(L, std::move(rows.steps), {{"ops", std::move(rows.ops)}});
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
