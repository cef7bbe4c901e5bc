// What torch.compile did: trace:compile_regions(), trace:graph_breaks() (with .islands and
// .recompiles) and trace:kernel_provenance(). The engine computes the rows
// (engine/analysis/compile_analysis.h); this file only pushes them.
#include "bindings/lua_api.h"
#include "bindings/lua_support.h"
#include "engine/analysis/compile_analysis.h"

namespace profsh::lua {

namespace {

const char* const kTraceType = "profsh.Trace";

CompileAnalysis Analyze(lua_State* L, const char* function) {
  TraceHandle* h = CheckUserdata<TraceHandle>(L, 1, kTraceType, function);
  Options opts(L, 2, function, {});
  return AnalyzeCompile(*h->trace, *h->Events());
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
