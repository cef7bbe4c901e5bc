// What-if on a critical path in Lua: cp:whatif{...} returns a WhatIf value (the new step time,
// the new path, its rows, and whatif again on top of it); cp:contributors(); the arrows the Chrome
// export draws. The engine changes the weights and finds the path (engine/analysis/critical_path/
// whatif.h); this file reads the changes and matches names with Lua's patterns, once per name.
#include "bindings/lua_critical_path_job.h"

#include <memory>
#include <string>

#include "bindings/lua_api.h"
#include "bindings/lua_critical_path.h"
#include "bindings/lua_support.h"
#include "engine/analysis/critical_path/job_path.h"
#include "engine/exporters/critical_path_flows.h"

namespace profsh::lua {

namespace {

const char* const kWhatIfType = "profsh.WhatIf";

struct WhatIfHandle {
  std::shared_ptr<Trace> trace;
  std::shared_ptr<const JobCriticalPath> job;
  std::shared_ptr<const WhatIfResult> result;
  std::vector<std::string> changes;  // how each change was asked for
};

// The job and the weights a what-if on argument 1 starts from (empty: the job's own).
struct Subject {
  std::shared_ptr<Trace> trace;
  std::shared_ptr<const JobCriticalPath> job;
  std::shared_ptr<const WhatIfResult> result;  // null for a CriticalPath
  std::vector<std::string> changes;
};

Subject SubjectAt(lua_State* L, int index, const char* function) {
  if (auto* w = static_cast<WhatIfHandle*>(luaL_testudata(L, index, kWhatIfType)))
    return Subject{w->trace, w->job, w->result, w->changes};
  auto* h = CheckUserdata<CriticalPathHandle>(L, index, kCriticalPathType, function);
  return Subject{h->trace, h->job, nullptr, {}};
}

// Whether `name` matches a Lua pattern (string.find); a malformed pattern is kept as the error.
struct LuaPatternMatcher {
  lua_State* L;
  std::string pattern;
  std::shared_ptr<std::string> error;
  bool operator()(std::string_view name) const {
    if (!error->empty()) return false;
    lua_getglobal(L, "string");
    lua_getfield(L, -1, "find");
    lua_pushlstring(L, name.data(), name.size());
    lua_pushlstring(L, pattern.data(), pattern.size());
    if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
      *error = lua_tostring(L, -1) ? lua_tostring(L, -1) : "error";
      lua_pop(L, 2);
      return false;
    }
    const bool found = !lua_isnil(L, -1);
    lua_pop(L, 2);
    return found;
  }
};

std::string Describe(const WhatIfChange& c, const std::string& what, const std::string& value) {
  std::string s = "{";
  if (!what.empty()) s += what + " = \"" + value + "\"";
  if (c.rank >= 0 && what != "rank")
    s += std::string(what.empty() ? "" : ", ") + "rank = " + std::to_string(c.rank);
  if (what == "rank") s += "rank = " + std::to_string(c.rank);
  if (c.remove) {
    s += ", remove = true";
  } else {
    char scale[32];
    std::snprintf(scale, sizeof scale, "%g", c.scale);
    s += std::string(", scale = ") + scale;
  }
  return s + "}";
}

// The list of changes at argument 2; each change's matcher shares `error`.
std::vector<WhatIfChange> ReadChanges(lua_State* L, const std::shared_ptr<std::string>& error) {
  if (!lua_istable(L, 2))
    throw LuaError(
        "bad argument #2 to 'whatif' (a list of changes expected, such as "
        "{ {kernel = \"gemm\", scale = 0.5} }, got " +
        std::string(luaL_typename(L, 2)) + ")");
  std::vector<WhatIfChange> changes;
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, 2));
  if (n == 0)
    throw LuaError(
        "bad argument #2 to 'whatif' (a list of changes expected, such as "
        "{ {kernel = \"gemm\", scale = 0.5} }; got no change)");
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, 2, i);
    const int top = lua_gettop(L);
    const std::string where = "change " + std::to_string(i);
    if (!lua_istable(L, top))
      throw LuaError("bad argument #2 to 'whatif' (" + where + " is a " + luaL_typename(L, top) +
                     ", not a table)");
    Options opts(L, top, "whatif", {"kernel", "op", "sync", "rank", "scale", "remove"});
    WhatIfChange c;
    std::string what, value;
    int targets = 0;
    for (const char* key : {"kernel", "op", "sync"}) {
      if (!opts.Has(key)) continue;
      ++targets;
      auto v = opts.String(key);
      if (!v)
        throw LuaError("bad argument #2 to 'whatif' (" + where + ": " + key +
                       " must be a pattern)");
      what = key;
      value = *v;
    }
    if (targets > 1)
      throw LuaError("bad argument #2 to 'whatif' (" + where +
                     ": name one of kernel, op and sync)");
    if (opts.Has("rank")) {
      const int64_t rank = opts.Int("rank", -1);
      if (rank < 0)
        throw LuaError("bad argument #2 to 'whatif' (" + where + ": rank must be >= 0)");
      c.rank = static_cast<int32_t>(rank);
    }
    if (targets == 0 && c.rank < 0)
      throw LuaError("bad argument #2 to 'whatif' (" + where +
                     ": name a kernel, op or sync pattern, or a rank)");
    c.target = what == "kernel" ? WhatIfChange::Target::kKernel
               : what == "op"   ? WhatIfChange::Target::kOperator
               : what == "sync" ? WhatIfChange::Target::kSync
                                : WhatIfChange::Target::kRank;
    c.remove = opts.Bool("remove", false);
    const std::optional<double> scale = opts.Number("scale");
    if (scale && c.remove)
      throw LuaError("bad argument #2 to 'whatif' (" + where + ": scale or remove, not both)");
    if (!scale && !c.remove)
      throw LuaError("bad argument #2 to 'whatif' (" + where + ": say scale = S or remove = true)");
    if (scale && !(*scale >= 0))
      throw LuaError("bad argument #2 to 'whatif' (" + where + ": scale must be >= 0)");
    if (c.target == WhatIfChange::Target::kSync && !c.remove)
      throw LuaError("bad argument #2 to 'whatif' (" + where +
                     ": a sync can only be removed (remove = true))");
    c.scale = scale.value_or(0.0);
    if (targets == 1) c.name_matches = LuaPatternMatcher{L, value, error};
    c.label = Describe(c, targets == 1 ? what : "rank", value);
    changes.push_back(std::move(c));
    lua_settop(L, top - 1);
  }
  return changes;
}

WhatIfHandle* CheckWhatIf(lua_State* L, const char* function) {
  return CheckUserdata<WhatIfHandle>(L, 1, kWhatIfType, function);
}

int WhatIfSummary(lua_State* L) {
  return Protect(L, [&] {
    WhatIfHandle* h = CheckWhatIf(L, "summary");
    PushRows(L, JobSummary(*h->job, h->result->path, h->result->weights), {});
    return 1;
  });
}

int WhatIfBreakdown(lua_State* L) {
  return Protect(L, [&] {
    WhatIfHandle* h = CheckWhatIf(L, "breakdown");
    PushRows(L, JobBreakdown(*h->trace, *h->job, h->result->path, h->result->weights), {});
    return 1;
  });
}

size_t LimitArg(lua_State* L, const char* function) {
  if (lua_isnoneornil(L, 2)) return 10;
  if (!lua_isinteger(L, 2) || lua_tointeger(L, 2) < 0)
    throw LuaError(std::string("bad argument #2 to '") + function +
                   "' (a number of rows >= 0 expected, 0 for all)");
  return static_cast<size_t>(lua_tointeger(L, 2));
}

int WhatIfField(lua_State* L) {
  return Protect(L, [&] {
    WhatIfHandle* h = CheckWhatIf(L, "index");
    if (lua_type(L, 2) != LUA_TSTRING) {
      lua_pushnil(L);
      return 1;
    }
    const std::string_view key = lua_tostring(L, 2);
    const WhatIfResult& r = *h->result;
    if (key == "duration") {
      lua_pushnumber(L, static_cast<double>(r.path.length_ns) / 1000.0);
    } else if (key == "baseline") {
      lua_pushnumber(L, static_cast<double>(r.baseline_ns) / 1000.0);
    } else if (key == "gain") {
      lua_pushnumber(L, static_cast<double>(r.baseline_ns - r.path.length_ns) / 1000.0);
    } else if (key == "edges_changed") {
      lua_pushinteger(L, static_cast<lua_Integer>(r.edges_changed));
    } else if (key == "edges") {
      PushRows(L, JobBreakdown(*h->trace, *h->job, r.path, r.weights), {});
    } else if (key == "nodes") {
      PushRows(L, CriticalPathNodes(*h->trace, h->job->cp, r.path.nodes), {});
    } else if (key == "changes") {
      lua_createtable(L, static_cast<int>(h->changes.size()), 0);
      for (size_t i = 0; i < h->changes.size(); ++i) {
        lua_pushstring(L, h->changes[i].c_str());
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
    } else if (key == "rank") {
      const uint16_t part =
          r.path.nodes.empty() ? kJobNoPart : h->job->layout.node_part[r.path.nodes.back()];
      if (part == kJobNoPart) {
        lua_pushnil(L);
      } else {
        lua_pushinteger(L, h->job->layout.parts[part].rank);
      }
    } else {
      lua_pushnil(L);
    }
    return 1;
  });
}

int WhatIfToString(lua_State* L) {
  return Protect(L, [&] {
    WhatIfHandle* h = CheckWhatIf(L, "tostring");
    char text[160];
    std::snprintf(text, sizeof text, "WhatIf(%.3f us, was %.3f us, %zu change(s))",
                  static_cast<double>(h->result->path.length_ns) / 1000.0,
                  static_cast<double>(h->result->baseline_ns) / 1000.0, h->changes.size());
    lua_pushstring(L, text);
    return 1;
  });
}

}  // namespace

int CriticalPathWhatIf(lua_State* L) {
  return Protect(L, [&] {
    Subject s = SubjectAt(L, 1, "whatif");
    auto error = std::make_shared<std::string>();
    std::vector<WhatIfChange> changes = ReadChanges(L, error);
    auto result = JobWhatIf(
        *s.job, changes,
        s.result ? std::span<const int64_t>(s.result->weights) : std::span<const int64_t>());
    if (!error->empty()) throw LuaError("bad argument #2 to 'whatif' (" + *error + ")");
    if (!result.ok()) throw LuaError(result.error().message);
    std::vector<std::string> labels = s.changes;
    for (const WhatIfChange& c : changes) labels.push_back(c.label);
    NewUserdata(L, kWhatIfType,
                WhatIfHandle{s.trace, s.job,
                             std::make_shared<const WhatIfResult>(std::move(result.value())),
                             std::move(labels)});
    return 1;
  });
}

int CriticalPathContributors(lua_State* L) {
  return Protect(L, [&] {
    Subject s = SubjectAt(L, 1, "contributors");
    const size_t limit = LimitArg(L, "contributors");
    if (s.result) {
      PushRows(L, TopContributors(*s.trace, *s.job, s.result->path, limit, s.result->weights), {});
    } else {
      PushRows(L, TopContributors(*s.trace, *s.job, s.job->cp.path, limit), {});
    }
    return 1;
  });
}

std::vector<ChromeFlow> CriticalPathFlowsOf(lua_State* L, int index, const char* function) {
  Subject s = SubjectAt(L, index, function);
  return CriticalPathFlows(s.job->cp.graph, s.job->layout,
                           s.result ? s.result->path : s.job->cp.path);
}

void RegisterWhatIf(lua_State* L) {
  RegisterType(
      L, kWhatIfType,
      {{"summary", WhatIfSummary},
       {"breakdown", WhatIfBreakdown},
       {"contributors", CriticalPathContributors},
       {"whatif", CriticalPathWhatIf}},
      WhatIfField,
      {"duration", "baseline", "gain", "edges_changed", "nodes", "edges", "changes", "rank"},
      {{"__gc", GcUserdata<WhatIfHandle>}, {"__tostring", WhatIfToString}});
}

}  // namespace profsh::lua
