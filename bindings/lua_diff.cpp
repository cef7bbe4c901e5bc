// profsh.diff(control, test, options): HTA's TraceDiff over two traces (engine/analysis/
// trace_diff). This file reads the arguments and pushes the rows with the five groups as views.
#include "bindings/lua_api.h"
#include "bindings/lua_support.h"
#include "engine/analysis/trace_diff.h"
#include "engine/load/trace_loader.h"

namespace profsh::lua {

namespace {

// A Trace, or the path of one to load.
std::shared_ptr<Trace> TraceArg(lua_State* L, int index, const char* role) {
  if (TraceHandle* h = TestTrace(L, index)) return h->trace;
  if (lua_type(L, index) == LUA_TSTRING) {
    auto trace = LoadTrace(lua_tostring(L, index));
    if (!trace.ok()) throw LuaError(trace.error().message);
    return std::shared_ptr<Trace>(std::move(trace.value()));
  }
  throw LuaError(std::string("bad argument #") + std::to_string(index) + " to 'diff' (" + role +
                 ": Trace or path expected, got " + luaL_typename(L, index) + ")");
}

// A step option: a ProfilerStep number, "first" or "whole"; nil gives `fallback`.
DiffStep StepOption(const Options& opts, const char* key, DiffStep fallback) {
  lua_State* L = opts.state();
  opts.Push(key);
  DiffStep step = fallback;
  if (lua_isinteger(L, -1)) {
    step = DiffStep{DiffStep::Kind::kNumber, lua_tointeger(L, -1)};
  } else if (lua_type(L, -1) == LUA_TSTRING) {
    auto parsed = ParseDiffStep(lua_tostring(L, -1));
    if (!parsed.ok()) {
      lua_pop(L, 1);
      throw LuaError(std::string("bad option '") + key + "' to 'diff' (" + parsed.error().message +
                     ")");
    }
    step = *parsed;
  } else if (!lua_isnil(L, -1)) {
    lua_pop(L, 1);
    throw LuaError(std::string("bad option '") + key +
                   "' to 'diff' (a step number, \"first\" or \"whole\" expected)");
  }
  lua_pop(L, 1);
  return step;
}

AnalysisRows RowsOfGroup(const AnalysisRows& all, const char* group) {
  AnalysisRows part;
  part.columns = all.columns;
  const size_t change = all.Column("change");
  for (size_t r = 0; r < all.rows.size(); ++r)
    if (all.rows.text(r, change) == group) part.rows.push_back(all.rows[r]);
  return part;
}

int ModuleDiff(lua_State* L) {
  return Protect(L, [&] {
    std::shared_ptr<Trace> control = TraceArg(L, 1, "control");
    std::shared_ptr<Trace> test = TraceArg(L, 2, "test");
    Options opts(
        L, 3, "diff",
        {"device", "by", "step", "control_step", "test_step", "sort", "min_change", "row_limit"});
    TraceDiffOptions options;
    auto device = ParseDiffDevice(opts.String("device").value_or("all"));
    if (!device.ok())
      throw LuaError("bad option 'device' to 'diff' (" + device.error().message + ")");
    options.device = *device;
    std::string by = opts.String("by").value_or("name");
    if (by != "name" && by != "short_name")
      throw LuaError("bad option 'by' to 'diff' (\"name\" or \"short_name\" expected, got \"" + by +
                     "\")");
    options.short_names = by == "short_name";
    DiffStep both = StepOption(opts, "step", DiffStep{});
    options.control_step = StepOption(opts, "control_step", both);
    options.test_step = StepOption(opts, "test_step", both);
    DiffRowSelection selection;
    selection.sort = opts.String("sort").value_or("name");
    if (Status s = CheckDiffSort(selection.sort); !s.ok())
      throw LuaError("bad option 'sort' to 'diff' (" + s.message() + ")");
    selection.min_change = opts.Number("min_change").value_or(0);
    if (!(selection.min_change >= 0))
      throw LuaError("bad option 'min_change' to 'diff' (a number >= 0 expected)");
    const int64_t row_limit = opts.Int("row_limit", 0);
    if (row_limit < 0) throw LuaError("bad option 'row_limit' to 'diff' (a count >= 0 expected)");
    selection.row_limit = static_cast<size_t>(row_limit);
    auto compared = DiffTraces(*control, *test, options);
    if (!compared.ok()) throw LuaError(compared.error().message);
    auto rows = SelectDiffRows(*compared, selection);
    std::vector<std::pair<const char*, AnalysisRows>> groups;
    for (const char* group : kDiffGroups) groups.emplace_back(group, RowsOfGroup(rows, group));
    PushRows(L, std::move(rows), std::move(groups));
    return 1;
  });
}

}  // namespace

void RegisterDiff(lua_State* L) {
  lua_pushcfunction(L, ModuleDiff);
  lua_setfield(L, -2, "diff");
}

}  // namespace profsh::lua
