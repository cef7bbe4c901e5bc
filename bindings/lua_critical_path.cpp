// t:critical_path{...} and the CriticalPath value it returns: duration, nodes, edges, graph,
// notes, summary(), breakdown(). The analysis is the engine's; this file reads the options and
// turns the results into rows.
#include "bindings/lua_critical_path.h"

#include "bindings/lua_api.h"
#include "bindings/lua_critical_path_job.h"
#include "bindings/lua_support.h"

namespace profsh::lua {

namespace {

const char* const kTraceType = "profsh.Trace";

CriticalPathHandle* CheckCriticalPath(lua_State* L, const char* function) {
  return CheckUserdata<CriticalPathHandle>(L, 1, kCriticalPathType, function);
}

// instance: a number, or {first, last}.
void ReadInstance(const Options& opts, CriticalPathOptions* options) {
  lua_State* L = opts.state();
  opts.Push("instance");
  auto bad = [&] {
    lua_pop(L, 1);
    throw LuaError(
        "bad option 'instance' to 'critical_path' (an instance number or {first, last} "
        "expected)");
  };
  if (lua_isinteger(L, -1)) {
    options->first_instance = options->last_instance = lua_tointeger(L, -1);
  } else if (lua_istable(L, -1)) {
    if (lua_rawlen(L, -1) != 2) bad();
    lua_rawgeti(L, -1, 1);
    lua_rawgeti(L, -2, 2);
    if (!lua_isinteger(L, -2) || !lua_isinteger(L, -1)) {
      lua_pop(L, 2);
      bad();
    }
    options->first_instance = lua_tointeger(L, -2);
    options->last_instance = lua_tointeger(L, -1);
    lua_pop(L, 2);
  } else if (!lua_isnil(L, -1)) {
    bad();
  }
  lua_pop(L, 1);
}

std::vector<std::string> ReadStrings(const Options& opts, const char* key) {
  lua_State* L = opts.state();
  std::vector<std::string> out;
  opts.Push(key);
  if (lua_type(L, -1) == LUA_TSTRING) {
    out.emplace_back(lua_tostring(L, -1));
  } else if (lua_istable(L, -1)) {
    const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      if (lua_type(L, -1) != LUA_TSTRING) {
        lua_pop(L, 2);
        throw LuaError(std::string("bad option '") + key +
                       "' to 'critical_path' (a list of strings expected)");
      }
      out.emplace_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  } else if (!lua_isnil(L, -1)) {
    lua_pop(L, 1);
    throw LuaError(std::string("bad option '") + key +
                   "' to 'critical_path' (a string or a list of strings expected)");
  }
  lua_pop(L, 1);
  return out;
}

int Summary(lua_State* L) {
  return Protect(L, [&] {
    CriticalPathHandle* h = CheckCriticalPath(L, "summary");
    PushRows(L, CriticalPathSummary(*h->cp, h->cp->path), {});
    return 1;
  });
}

int Breakdown(lua_State* L) {
  return Protect(L, [&] {
    CriticalPathHandle* h = CheckCriticalPath(L, "breakdown");
    // A job's path has a rank column (cross_rank.h).
    PushRows(L,
             h->job->linked ? JobBreakdown(*h->trace, *h->job, h->cp->path)
                            : CriticalPathBreakdown(*h->trace, *h->cp, h->cp->path),
             {});
    return 1;
  });
}

int Field(lua_State* L) {
  return Protect(L, [&] {
    CriticalPathHandle* h = CheckCriticalPath(L, "index");
    if (lua_type(L, 2) != LUA_TSTRING) {
      lua_pushnil(L);
      return 1;
    }
    const std::string_view key = lua_tostring(L, 2);
    const CriticalPath& cp = *h->cp;
    if (key == "duration") {
      lua_pushnumber(L, CriticalPathMicroseconds(cp.path));
    } else if (key == "nodes") {
      PushRows(L, CriticalPathNodes(*h->trace, cp, cp.path.nodes), {});
    } else if (key == "edges") {
      PushRows(L, CriticalPathEdges(*h->trace, cp, cp.path, true), {});
    } else if (key == "graph") {
      std::vector<uint32_t> all(cp.graph.node_count());
      for (uint32_t n = 0; n < all.size(); ++n) all[n] = n;
      PushRows(L, CriticalPathEdges(*h->trace, cp, cp.path, false),
               {{"nodes", CriticalPathNodes(*h->trace, cp, all)}});
    } else if (key == "notes") {
      lua_createtable(L, static_cast<int>(cp.notes.size()), 0);
      for (size_t i = 0; i < cp.notes.size(); ++i) {
        lua_pushstring(L, cp.notes[i].c_str());
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
    } else if (key == "rank") {
      lua_pushinteger(L, cp.rank);
    } else if (key == "start" || key == "end") {
      lua_pushnumber(L,
                     static_cast<double>(key == "start" ? cp.window_start : cp.window_end) / 1000);
    } else {
      lua_pushnil(L);
    }
    return 1;
  });
}

int ToString(lua_State* L) {
  return Protect(L, [&] {
    CriticalPathHandle* h = CheckCriticalPath(L, "tostring");
    const std::string s = "CriticalPath(" +
                          Cell::Double(CriticalPathMicroseconds(h->cp->path)).Format() + " us, " +
                          std::to_string(h->cp->path.edges.size()) + " of the graph's " +
                          std::to_string(h->cp->graph.edge_count()) + " edges)";
    lua_pushstring(L, s.c_str());
    return 1;
  });
}

}  // namespace

void PushCriticalPath(lua_State* L, std::shared_ptr<Trace> trace,
                      std::shared_ptr<const JobCriticalPath> job) {
  std::shared_ptr<const CriticalPath> cp(job, &job->cp);
  NewUserdata(L, kCriticalPathType,
              CriticalPathHandle{std::move(trace), std::move(cp), std::move(job)});
}

int TraceCriticalPath(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckUserdata<TraceHandle>(L, 1, kTraceType, "critical_path");
    Options opts(L, 2, "critical_path",
                 {"annotation", "instance", "rank", "data_load_events", "zero_weight_launch_edges",
                  "rounding", "link_ranks"});
    JobCriticalPathOptions job_options;
    job_options.link_ranks = opts.Bool("link_ranks", true);
    CriticalPathOptions& options = job_options.path;
    if (auto a = opts.String("annotation")) options.annotation = *a;
    ReadInstance(opts, &options);
    if (opts.Has("rank")) options.rank = static_cast<int32_t>(opts.Int("rank", 0));
    options.data_load_events = ReadStrings(opts, "data_load_events");
    options.zero_weight_launch_edges = opts.Bool("zero_weight_launch_edges", false);
    const std::string rounding = opts.String("rounding").value_or("exact");
    if (rounding != "exact" && rounding != "hta")
      throw LuaError(
          "bad option 'rounding' to 'critical_path' (\"exact\" or \"hta\" expected, got \"" +
          rounding + "\")");
    options.hta_rounding = rounding == "hta";
    auto job = AnalyzeJobCriticalPath(*h->trace, job_options);
    if (!job.ok()) throw LuaError(job.error().message);
    PushCriticalPath(L, h->trace, std::make_shared<const JobCriticalPath>(std::move(job.value())));
    return 1;
  });
}

void RegisterCriticalPath(lua_State* L) {
  RegisterType(L, kCriticalPathType,
               {{"summary", Summary},
                {"breakdown", Breakdown},
                {"whatif", CriticalPathWhatIf},
                {"contributors", CriticalPathContributors}},
               Field, {"duration", "nodes", "edges", "graph", "notes", "rank", "start", "end"},
               {{"__gc", GcUserdata<CriticalPathHandle>}, {"__tostring", ToString}});
}

}  // namespace profsh::lua
