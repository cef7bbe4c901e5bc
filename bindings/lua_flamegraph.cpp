// Flamegraphs and speedscope profiles from Lua: trace:flamegraph(), trace:export_speedscope(),
// profsh.flamegraph(), profsh.flamegraph_diff() and profsh.speedscope() for folded-stack files.
#include <tuple>

#include "bindings/lua_api.h"
#include "bindings/lua_support.h"
#include "engine/flamegraph/flame_svg.h"
#include "engine/flamegraph/speedscope.h"
#include "engine/flamegraph/trace_stacks.h"

namespace profsh::lua {

namespace {

const char* const kTraceType = "profsh.Trace";

FlameOptions ReadFlameOptions(const Options& opts, const std::string& default_count_name) {
  FlameOptions o;
  if (auto v = opts.String("title")) o.title = *v;
  if (auto v = opts.String("subtitle")) o.subtitle = *v;
  o.width = static_cast<int>(opts.Int("width", 1200));
  o.frame_height = static_cast<int>(opts.Int("height", 16));
  if (auto v = opts.Number("font_size")) o.font_size = *v;
  opts.Push("minwidth");
  if (lua_type(opts.state(), -1) == LUA_TSTRING) {
    std::string m = lua_tostring(opts.state(), -1);
    lua_pop(opts.state(), 1);
    o.min_width_percent = !m.empty() && m.back() == '%';
    if (o.min_width_percent) m.pop_back();
    try {
      o.min_width = std::stod(m);
    } catch (const std::exception&) {
      throw LuaError(
          "bad option 'minwidth' (a number of pixels, or a percentage like \"0.5%\", expected)");
    }
  } else {
    lua_pop(opts.state(), 1);
    if (auto v = opts.Number("minwidth")) {
      o.min_width = *v;
      o.min_width_percent = false;
    }
  }
  if (auto v = opts.String("colors")) o.colors = *v;
  o.reverse = opts.Bool("reverse", false);
  o.negate = opts.Bool("negate", false);
  o.count_name = opts.String("count_name").value_or(default_count_name);
  return o;
}

#define PROFSH_FLAME_OPTIONS                                                            \
  "title", "subtitle", "width", "height", "font_size", "minwidth", "colors", "reverse", \
      "count_name", "negate"

// The drawing's summary; for a trace's Python stacks also what had no stack of its own (values in
// `unit`), and a note saying so.
void PushSummary(lua_State* L, const FlameSummary& s, const StackCoverage* coverage = nullptr,
                 const std::string& unit = "") {
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, static_cast<lua_Integer>(s.stacks));
  lua_setfield(L, -2, "stacks");
  lua_pushinteger(L, static_cast<lua_Integer>(s.frames_drawn));
  lua_setfield(L, -2, "frames");
  lua_pushnumber(L, s.total);
  lua_setfield(L, -2, "total");
  lua_pushinteger(L, static_cast<lua_Integer>(s.ignored_lines));
  lua_setfield(L, -2, "ignored_lines");
  if (coverage == nullptr || !(coverage->total > 0)) return;
  // Python stacks: what was drawn without a stack of its own (trace_stacks.h).
  for (const auto& [key, events, value] :
       {std::tuple{"inherited", coverage->inherited_events, coverage->inherited},
        std::tuple{"backward", coverage->backward_events, coverage->backward},
        std::tuple{"unstacked", coverage->unstacked_events, coverage->unstacked}}) {
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, static_cast<lua_Integer>(events));
    lua_setfield(L, -2, "events");
    lua_pushnumber(L, value);
    lua_setfield(L, -2, "value");
    lua_setfield(L, -2, key);
  }
  const std::string note = DescribeStackCoverage(*coverage, unit);
  if (!note.empty()) {
    lua_pushstring(L, note.c_str());
    lua_setfield(L, -2, "note");
  }
}

TraceStackOptions ReadStackOptions(const Options& opts, const char* default_thread_frames) {
  TraceStackOptions s;
  std::string frames = opts.String("thread_frames").value_or(default_thread_frames);
  if (frames != "names" && frames != "pids") {
    throw LuaError("bad option 'thread_frames' (\"names\" or \"pids\" expected, got \"" + frames +
                   "\")");
  }
  s.thread_frames = frames == "names" ? ThreadFrames::kName : ThreadFrames::kNameAndPid;
  if (auto m = opts.String("metric")) s.metric = *m;
  std::string source = opts.String("stacks").value_or("auto");
  if (source == "auto") {
    s.source = StackSource::kAuto;
  } else if (source == "python") {
    s.source = StackSource::kPython;
  } else if (source == "operators") {
    s.source = StackSource::kOperators;
  } else if (source == "samples") {
    s.source = StackSource::kSamples;
    s.metric = "samples";
    s.under_ranges = opts.Bool("under_ranges", false);
    s.range = opts.String("range").value_or("");
  } else {
    throw LuaError(
        "bad option 'stacks' (\"auto\", \"python\", \"operators\" or \"samples\" expected, got "
        "\"" +
        source + "\")");
  }
  if (opts.Has("threads")) s.threads = opts.Bool("threads", false) ? 1 : 0;
  return s;
}

FoldedStacks StacksOf(TraceHandle* h, const TraceStackOptions& s,
                      StackCoverage* coverage = nullptr) {
  auto stacks = TraceStacks(*h->trace, *h->Events(), s, coverage);
  if (!stacks.ok()) throw LuaError(stacks.error().message);
  return std::move(stacks.value());
}

// A flamegraph input argument: a Trace, or the path of a trace or folded-stack file. Sets
// *from_trace when the values are a trace metric's (which names the unit).
FoldedStacks StacksArg(lua_State* L, int index, const char* function, const char* what,
                       const TraceStackOptions& s, bool* from_trace,
                       StackCoverage* coverage = nullptr) {
  if (auto* h = static_cast<TraceHandle*>(luaL_testudata(L, index, kTraceType))) {
    *from_trace = true;
    FoldedStacks stacks = StacksOf(h, s, coverage);
    if (stacks.size() == 0) throw LuaError("nothing to draw: no event has a positive " + s.metric);
    return stacks;
  }
  if (lua_type(L, index) != LUA_TSTRING) {
    throw LuaError(std::string("bad argument #") + std::to_string(index) + " to '" + function +
                   "' (" + what + ": a Trace or a file path expected, got " +
                   luaL_typename(L, index) + ")");
  }
  std::string path = lua_tostring(L, index);
  *from_trace = *from_trace || IsTraceFile(path);
  auto stacks = StacksFromFile(path, s, coverage);
  if (!stacks.ok()) throw LuaError(stacks.error().message);
  return std::move(stacks.value());
}

}  // namespace

int TraceFlamegraph(lua_State* L) {
  return Protect(L, [&] {
    auto* h = CheckUserdata<TraceHandle>(L, 1, kTraceType, "flamegraph");
    std::string path(CheckString(L, 2, "flamegraph", "output path"));
    Options opts(L, 3, "flamegraph",
                 {PROFSH_FLAME_OPTIONS, "metric", "stacks", "threads", "thread_frames",
                  "under_ranges", "range"});
    TraceStackOptions s = ReadStackOptions(opts, "pids");
    FlameOptions o = ReadFlameOptions(opts, MetricUnit(s.metric));
    StackCoverage coverage;
    FoldedStacks stacks = StacksOf(h, s, &coverage);
    if (stacks.size() == 0) throw LuaError("nothing to draw: no event has a positive " + s.metric);
    auto summary = WriteFlamegraph(stacks, o, path);
    if (!summary.ok()) throw LuaError(summary.error().message);
    PushSummary(L, summary.value(), &coverage, MetricUnit(s.metric));
    return 1;
  });
}

int TraceSpeedscope(lua_State* L) {
  return Protect(L, [&] {
    auto* h = CheckUserdata<TraceHandle>(L, 1, kTraceType, "export_speedscope");
    std::string path(CheckString(L, 2, "export_speedscope", "output path"));
    Options opts(L, 3, "export_speedscope",
                 {"metric", "stacks", "threads", "thread_frames", "under_ranges", "range", "name"});
    TraceStackOptions s = ReadStackOptions(opts, "pids");
    FoldedStacks stacks = StacksOf(h, s);
    std::string name = opts.String("name").value_or(h->trace->source_path + " " + s.metric);
    Status st = WriteSpeedscope(stacks, name, MetricUnit(s.metric), path);
    if (!st.ok()) throw LuaError(st.message());
    return 0;
  });
}

namespace {

// Draws `stacks` into `path`, or, with none, returns the SVG after the summary.
int PushDrawn(lua_State* L, FoldedStacks& stacks, const FlameOptions& o, const std::string* path,
              const StackCoverage* coverage = nullptr, const std::string& unit = "") {
  std::string svg;
  auto summary = path ? WriteFlamegraph(stacks, o, *path) : RenderFlamegraph(stacks, o, &svg);
  if (!summary.ok()) throw LuaError(summary.error().message);
  PushSummary(L, summary.value(), coverage, unit);
  if (!path) lua_pushlstring(L, svg.data(), svg.size());
  return path ? 1 : 2;
}

int ModuleFlamegraph(lua_State* L) {
  return Protect(L, [&] {
    // No output path (nil): the SVG comes back as a second result (reports inline it).
    const bool to_string = lua_isnil(L, 2);
    std::string out(to_string ? "" : CheckString(L, 2, "flamegraph", "output path"));
    Options opts(L, 3, "flamegraph",
                 {PROFSH_FLAME_OPTIONS, "metric", "stacks", "threads", "thread_frames",
                  "under_ranges", "range"});
    TraceStackOptions s = ReadStackOptions(opts, "pids");
    bool from_trace = false;
    StackCoverage coverage;
    FoldedStacks stacks = StacksArg(L, 1, "flamegraph", "input", s, &from_trace, &coverage);
    FlameOptions o = ReadFlameOptions(opts, from_trace ? MetricUnit(s.metric) : "samples");
    return PushDrawn(L, stacks, o, to_string ? nullptr : &out, &coverage, MetricUnit(s.metric));
  });
}

int ModuleFlamegraphDiff(lua_State* L) {
  return Protect(L, [&] {
    const bool to_string = lua_isnil(L, 3);
    std::string out(to_string ? "" : CheckString(L, 3, "flamegraph_diff", "output path"));
    Options opts(L, 4, "flamegraph_diff",
                 {PROFSH_FLAME_OPTIONS, "metric", "stacks", "threads", "thread_frames",
                  "under_ranges", "range", "normalize"});
    TraceStackOptions s = ReadStackOptions(opts, "names");
    bool from_trace = false;
    FoldedStacks a = StacksArg(L, 1, "flamegraph_diff", "before", s, &from_trace);
    FoldedStacks b = StacksArg(L, 2, "flamegraph_diff", "after", s, &from_trace);
    FoldedStacks d = FoldedStacks::Difference(a, b, opts.Bool("normalize", false));
    FlameOptions o = ReadFlameOptions(opts, from_trace ? MetricUnit(s.metric) : "samples");
    if (o.title.empty()) o.title = "Differential Flame Graph";
    return PushDrawn(L, d, o, to_string ? nullptr : &out);
  });
}

int ModuleSpeedscope(lua_State* L) {
  return Protect(L, [&] {
    std::string out(CheckString(L, 2, "speedscope", "output path"));
    Options opts(
        L, 3, "speedscope",
        {"name", "unit", "metric", "stacks", "threads", "thread_frames", "under_ranges", "range"});
    TraceStackOptions s = ReadStackOptions(opts, "pids");
    bool from_trace = false;
    FoldedStacks stacks = StacksArg(L, 1, "speedscope", "input", s, &from_trace);
    std::string unit = opts.String("unit").value_or(from_trace ? MetricUnit(s.metric) : "none");
    Status st = WriteSpeedscope(stacks, opts.String("name").value_or(stacks.name()), unit, out);
    if (!st.ok()) throw LuaError(st.message());
    return 0;
  });
}

}  // namespace

void RegisterFlamegraph(lua_State* L) {
  lua_pushcfunction(L, ModuleFlamegraph);
  lua_setfield(L, -2, "flamegraph");
  lua_pushcfunction(L, ModuleFlamegraphDiff);
  lua_setfield(L, -2, "flamegraph_diff");
  lua_pushcfunction(L, ModuleSpeedscope);
  lua_setfield(L, -2, "speedscope");
}

}  // namespace profsh::lua
