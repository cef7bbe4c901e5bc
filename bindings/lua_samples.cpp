// The cpu activity's samples for Lua: trace:samples{...} lists them, trace:hotspots{...} gives
// VTune's bottom-up and top-down tables (engine/analysis/cpu_samples).
#include <algorithm>
#include <string>

#include "bindings/lua_api.h"
#include "bindings/lua_support.h"
#include "engine/analysis/analysis_rows.h"
#include "engine/analysis/cpu_samples.h"

namespace profsh::lua {

namespace {

const char* const kTraceType = "profsh.Trace";

// Whether the trace comes from a run that sampled (its "profsh" metadata names the method).
bool WasSampled(const Trace& t) {
  for (const auto& [key, value] : t.metadata) {
    if (key == "profsh" && value.find("\"sampling\":") != std::string::npos) return true;
  }
  return false;
}

constexpr char kNoSamples[] =
    ": the trace has no CPU samples (record with the cpu activity: --activities ...,cpu or "
    "activities={..., \"cpu\"})";

std::string_view Last(std::string_view frames) {
  const size_t semi = frames.rfind(';');
  return semi == std::string_view::npos ? frames : frames.substr(semi + 1);
}

}  // namespace

// trace:samples{range=NAME, limit=N}: one row per sample, in thread then time order.
int TraceSamples(lua_State* L) {
  return Protect(L, [&] {
    auto* h = CheckUserdata<TraceHandle>(L, 1, kTraceType, "samples");
    Options opts(L, 2, "samples", {"range", "limit"});
    const std::string range = opts.String("range").value_or("");
    const int64_t limit = opts.Int("limit", -1);
    const Trace& t = *h->trace;
    const CpuSamples samples = CollectCpuSamples(t);
    if (samples.samples.empty() && !WasSampled(t)) throw LuaError(t.source_path + kNoSamples);
    AnalysisRows rows;
    rows.columns = {"ts",  "pid", "tid",    "function", "module", "nvtx",
                    "itt", "op",  "ranges", "stack",    "weight"};
    for (const CpuSample& s : samples.samples) {
      if (limit >= 0 && static_cast<int64_t>(rows.rows.size()) >= limit) break;
      const std::string_view path = samples.strings.Get(s.range_path);
      if (!range.empty() && !RangePathHas(path, range)) continue;
      const Track& track = t.tracks[s.track];
      rows.rows.push_back(
          {Cell::Double(static_cast<double>(s.ts_ns - t.begin_ns()) / 1000.0),
           Cell::Text(t.FormatIdent(track.pid)), Cell::Text(t.FormatIdent(track.tid)),
           Cell::Text(std::string(samples.strings.Get(s.function))),
           Cell::Text(std::string(Last(samples.strings.Get(s.modules)))),
           Cell::Text(std::string(samples.strings.Get(s.nvtx))),
           Cell::Text(std::string(samples.strings.Get(s.itt))),
           Cell::Text(std::string(samples.strings.Get(s.op))), Cell::Text(std::string(path)),
           Cell::Text(std::string(samples.strings.Get(s.stack))), Cell::Int(s.weight)});
    }
    PushRows(L, std::move(rows), {});
    return 1;
  });
}

// trace:hotspots{by="function"|"module"|"range", order="bottom_up"|"top_down", range=NAME}
int TraceHotspots(lua_State* L) {
  return Protect(L, [&] {
    auto* h = CheckUserdata<TraceHandle>(L, 1, kTraceType, "hotspots");
    Options opts(L, 2, "hotspots", {"by", "order", "range", "limit"});
    HotspotOptions options;
    const std::string by = opts.String("by").value_or("function");
    if (by == "function") {
      options.by = HotspotKey::kFunction;
    } else if (by == "module") {
      options.by = HotspotKey::kModule;
    } else if (by == "range") {
      options.by = HotspotKey::kRange;
    } else {
      throw LuaError(
          "bad option 'by' to 'hotspots' (\"function\", \"module\" or \"range\" "
          "expected, got \"" +
          by + "\")");
    }
    const std::string order = opts.String("order").value_or("bottom_up");
    if (order != "bottom_up" && order != "top_down") {
      throw LuaError(
          "bad option 'order' to 'hotspots' (\"bottom_up\" or \"top_down\" expected, "
          "got \"" +
          order + "\")");
    }
    options.range = opts.String("range").value_or("");
    const int64_t limit = opts.Int("limit", -1);
    const Trace& t = *h->trace;
    const CpuSamples samples = CollectCpuSamples(t);
    if (samples.samples.empty() && !WasSampled(t)) throw LuaError(t.source_path + kNoSamples);
    uint64_t kept = 0;
    auto result = ComputeHotspots(samples, options, &kept);
    if (!result.ok()) throw LuaError(result.error().message);
    std::vector<HotspotRow>& list = result.value();
    if (order == "top_down") {
      std::stable_sort(list.begin(), list.end(), [](const HotspotRow& a, const HotspotRow& b) {
        return a.total != b.total ? a.total > b.total : a.self > b.self;
      });
    }
    AnalysisRows rows;
    rows.columns = {by};
    if (options.by == HotspotKey::kFunction) rows.columns.push_back("module");
    for (const char* c : {"self", "self_pct", "total", "total_pct"}) rows.columns.push_back(c);
    for (const HotspotRow& r : list) {
      if (limit >= 0 && static_cast<int64_t>(rows.rows.size()) >= limit) break;
      std::vector<Cell> row{Cell::Text(r.name)};
      if (options.by == HotspotKey::kFunction) row.push_back(Cell::Text(r.module));
      row.push_back(Cell::Int(static_cast<int64_t>(r.self)));
      row.push_back(Cell::Fixed(r.self_pct, 2));
      row.push_back(Cell::Int(static_cast<int64_t>(r.total)));
      row.push_back(Cell::Fixed(r.total_pct, 2));
      rows.rows.push_back(row);
    }
    rows.notes.push_back(std::to_string(kept) + " samples" +
                         (options.range.empty() ? "" : " inside '" + options.range + "'"));
    PushRows(L, std::move(rows), {});
    return 1;
  });
}

}  // namespace profsh::lua
