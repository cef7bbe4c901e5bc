// What torch.compile did: trace:compile_regions(), trace:graph_breaks() (with .islands and
// .recompiles) and trace:kernel_provenance(). The engine computes the rows
// (engine/analysis/compile_analysis.h); this file only pushes them.
#include "bindings/lua_api.h"
#include "bindings/lua_ranks.h"
#include "bindings/lua_support.h"
#include "engine/analysis/compile_analysis.h"

namespace profsh::lua {

namespace {

const char* const kTraceType = "profsh.Trace";

// The analysis of each rank of a multi-rank trace, its rows concatenated with a rank column
// (on the whole trace when it has one rank).
CompileAnalysis Analyze(lua_State* L, const char* function) {
  TraceHandle* h = CheckUserdata<TraceHandle>(L, 1, kTraceType, function);
  Options opts(L, 2, function, {});
  const std::vector<RankPart>& parts = RankParts(h);
  if (parts.empty()) return AnalyzeCompile(*h->trace, *h->Events());
  std::vector<CompileAnalysis> per_rank;
  for (const RankPart& p : parts)
    per_rank.push_back(AnalyzeCompile(*p.trace, *BuildFunctionEvents(*p.trace)));
  auto concat = [&](AnalysisRows CompileAnalysis::*member) {
    std::vector<AnalysisRows> rows;
    for (CompileAnalysis& a : per_rank) rows.push_back(std::move(a.*member));
    return ConcatRanks(std::move(rows), parts);
  };
  CompileAnalysis out;
  out.regions = concat(&CompileAnalysis::regions);
  out.steps = concat(&CompileAnalysis::steps);
  out.islands = concat(&CompileAnalysis::islands);
  out.recompiles = concat(&CompileAnalysis::recompiles);
  out.provenance = concat(&CompileAnalysis::provenance);
  return out;
}

}  // namespace

int TraceCompileRegions(lua_State* L) {
  return Protect(L, [&] {
    PushRows(L, std::move(Analyze(L, "compile_regions").regions), {});
    return 1;
  });
}

int TraceGraphBreaks(lua_State* L) {
  return Protect(L, [&] {
    CompileAnalysis a = Analyze(L, "graph_breaks");
    PushRows(L, std::move(a.steps),
             {{"islands", std::move(a.islands)}, {"recompiles", std::move(a.recompiles)}});
    return 1;
  });
}

int TraceKernelProvenance(lua_State* L) {
  return Protect(L, [&] {
    PushRows(L, std::move(Analyze(L, "kernel_provenance").provenance), {});
    return 1;
  });
}

}  // namespace profsh::lua
