// profsh.load() and the Trace userdata: loading, exports, event queries, process/thread tables.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>

#include "bindings/lua_api.h"
#include "bindings/lua_critical_path.h"
#include "bindings/lua_critical_path_job.h"
#include "bindings/lua_ranks.h"
#include "bindings/lua_support.h"
#include "engine/analysis/function_events.h"
#include "engine/analysis/memory_timeline.h"
#include "engine/exporters/exporter.h"
#include "engine/exporters/sqlite_database.h"
#include "engine/load/trace_loader.h"

namespace profsh::lua {

namespace {

const char* const kTraceType = "profsh.Trace";

double NsToUs(int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

void PushIdent(lua_State* L, const Trace& t, const Ident& id) {
  if (id.is_string) {
    std::string_view s = t.str(id.str);
    lua_pushlstring(L, s.data(), s.size());
  } else {
    lua_pushinteger(L, id.number);
  }
}

void PushJson(lua_State* L, const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      lua_pushnil(L);
      break;
    case nlohmann::json::value_t::boolean:
      lua_pushboolean(L, j.get<bool>());
      break;
    case nlohmann::json::value_t::number_integer:
      lua_pushinteger(L, j.get<int64_t>());
      break;
    case nlohmann::json::value_t::number_unsigned:
      lua_pushinteger(L, static_cast<lua_Integer>(j.get<uint64_t>()));
      break;
    case nlohmann::json::value_t::number_float:
      lua_pushnumber(L, j.get<double>());
      break;
    case nlohmann::json::value_t::string: {
      const auto& s = j.get_ref<const std::string&>();
      lua_pushlstring(L, s.data(), s.size());
      break;
    }
    case nlohmann::json::value_t::array: {
      lua_createtable(L, static_cast<int>(j.size()), 0);
      lua_Integer i = 1;
      for (const auto& item : j) {
        PushJson(L, item);
        lua_rawseti(L, -2, i++);
      }
      break;
    }
    case nlohmann::json::value_t::object: {
      lua_createtable(L, 0, static_cast<int>(j.size()));
      for (const auto& [k, v] : j.items()) {
        PushJson(L, v);
        lua_setfield(L, -2, k.c_str());
      }
      break;
    }
    default:
      lua_pushnil(L);
  }
}

void PushArgValue(lua_State* L, const Trace& t, const ArgValue& v) {
  switch (v.type) {
    case ArgType::kNull:
      lua_pushnil(L);
      break;
    case ArgType::kBool:
      lua_pushboolean(L, v.bool_value);
      break;
    case ArgType::kInt:
      lua_pushinteger(L, v.int_value);
      break;
    case ArgType::kUInt:
      lua_pushnumber(L, static_cast<double>(static_cast<uint64_t>(v.int_value)));
      break;
    case ArgType::kDouble:
      lua_pushnumber(L, v.double_value);
      break;
    case ArgType::kString: {
      std::string_view s = t.str(v.str);
      lua_pushlstring(L, s.data(), s.size());
      break;
    }
    case ArgType::kJson: {
      std::string_view s = t.str(v.str);
      auto j = nlohmann::json::parse(s.begin(), s.end(), nullptr, false);
      if (j.is_discarded()) {
        lua_pushlstring(L, s.data(), s.size());
      } else {
        PushJson(L, j);
      }
      break;
    }
  }
}

// What an event is (kind): from the category for ranges, "memory" for allocation records.
EventKind KindOfEvent(const Trace& t, size_t i) {
  const char ph = t.events.phase(i);
  if (ph == 'X' || ph == 'B') return KindOfCategory(t.category_name(t.events.category(i)));
  if ((ph == 'i' || ph == 'I') && t.str(t.events.name(i)) == "[memory]") return EventKind::kMemory;
  return EventKind::kOther;
}

}  // namespace

void PushEvent(lua_State* L, const Trace& t, size_t i) {
  const EventTable& ev = t.events;
  lua_createtable(L, 0, 11);
  lua_pushinteger(L, static_cast<lua_Integer>(i + 1));
  lua_setfield(L, -2, "index");
  std::string_view name = t.str(ev.name(i));
  lua_pushlstring(L, name.data(), name.size());
  lua_setfield(L, -2, "name");
  std::string_view cat = t.category_name(ev.category(i));
  lua_pushlstring(L, cat.data(), cat.size());
  lua_setfield(L, -2, "cat");
  char ph = ev.phase(i);
  lua_pushlstring(L, &ph, 1);
  lua_setfield(L, -2, "ph");
  lua_pushstring(L, EventKindName(KindOfEvent(t, i)));
  lua_setfield(L, -2, "kind");
  const Track& track = t.tracks[ev.track(i)];
  PushIdent(L, t, track.pid);
  lua_setfield(L, -2, "pid");
  PushIdent(L, t, track.tid);
  lua_setfield(L, -2, "tid");
  lua_pushnumber(L, NsToUs(ev.ts(i) - t.begin_ns()));
  lua_setfield(L, -2, "ts");
  lua_pushnumber(L, NsToUs(ev.dur(i)));
  lua_setfield(L, -2, "dur");
  lua_newtable(L);
  for (auto item : t.args.Get(ev.args(i))) {
    PushArgValue(L, t, item.value);
    std::string_view key = t.str(item.key);
    if (item.top_level) {
      lua_setfield(L, -3, std::string(key).c_str());  // event-level fields ("id", "bp", ...)
    } else {
      lua_setfield(L, -2, std::string(key).c_str());
    }
  }
  lua_setfield(L, -2, "args");
  if (ev.flags(i) & kFlagUnterminated) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "unterminated");
  }
}

namespace {

TraceHandle* CheckTrace(lua_State* L, int index, const char* function) {
  return CheckUserdata<TraceHandle>(L, index, kTraceType, function);
}

int Load(lua_State* L) {
  return Protect(L, [&] {
    std::string path(CheckString(L, 1, "load", "file path"));
    auto trace = LoadTrace(path);
    if (!trace.ok()) throw LuaError(trace.error().message);
    PushTrace(L, std::shared_ptr<Trace>(std::move(trace.value())));
    return 1;
  });
}

// itt_domains: nil (ITT tasks join only where the trace has no PyTorch operators), true (all),
// false (none) or a list of domain names.
IttSelection ReadIttDomains(const Options& opts) {
  lua_State* L = opts.state();
  IttSelection out;
  opts.Push("itt_domains");
  const int type = lua_type(L, -1);
  if (type == LUA_TBOOLEAN) {
    out.mode = lua_toboolean(L, -1) ? IttSelection::Mode::kAll : IttSelection::Mode::kNone;
  } else if (type == LUA_TTABLE) {
    out.mode = IttSelection::Mode::kDomains;
    for (lua_Integer i = 1, n = static_cast<lua_Integer>(lua_rawlen(L, -1)); i <= n; ++i) {
      if (lua_rawgeti(L, -1, i) != LUA_TSTRING) {
        const std::string got = TypeName(L, -1);
        lua_pop(L, 2);
        throw LuaError("bad option 'itt_domains' to 'key_averages' (domain names expected, item " +
                       std::to_string(i) + " is " + got + ")");
      }
      out.domains.emplace_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  } else if (type != LUA_TNIL) {
    const std::string got = TypeName(L, -1);
    lua_pop(L, 1);
    throw LuaError(
        "bad option 'itt_domains' to 'key_averages' (true, false or a list of domain "
        "names expected, got " +
        got + ")");
  }
  lua_pop(L, 1);
  return out;
}

int KeyAveragesMethod(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTrace(L, 1, "key_averages");
    Options opts(L, 2, "key_averages",
                 {"group_by_input_shape", "group_by_stack_n", "torch_format", "itt_domains"});
    bool by_shape = opts.Bool("group_by_input_shape", false);
    int64_t stack_n = opts.Int("group_by_stack_n", 0);
    if (stack_n < 0)
      throw LuaError("bad option 'group_by_stack_n' to 'key_averages' (must be >= 0)");
    auto events = h->Events(ReadIttDomains(opts));
    const EventSampleCounts samples = CountSamplesPerEvent(*h->trace, *events);
    PushKeyAverages(L, ComputeKeyAverages(events, by_shape, static_cast<int>(stack_n),
                                          ReadTorchFormat(opts, "key_averages"), &samples));
    return 1;
  });
}

int ExportChromeTrace(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTrace(L, 1, "export_chrome_trace");
    std::string path(CheckString(L, 2, "export_chrome_trace", "file path"));
    // counters = true adds queue length and memory bandwidth as counter tracks; critical_path =
    // cp (or a what-if) its path's edges as flow events.
    Options opts(L, 3, "export_chrome_trace", {"counters", "critical_path"});
    std::vector<ChromeFlow> flows;
    if (opts.Has("critical_path")) {
      opts.Push("critical_path");
      flows = CriticalPathFlowsOf(L, lua_gettop(L), "export_chrome_trace");
      lua_pop(L, 1);
    }
    Status s = ExportChromeTrace(
        *h->trace, path, {{"counters", opts.Bool("counters", false) ? "true" : "false"}}, flows);
    if (!s.ok()) throw LuaError(s.message());
    return 0;
  });
}

int ExportStacks(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTrace(L, 1, "export_stacks");
    std::string path(CheckString(L, 2, "export_stacks", "file path"));
    auto metric = OptString(L, 3, "export_stacks", "metric name");
    Status s = ExportTrace(*h->trace, "stacks", path,
                           {{"metric", metric ? std::string(*metric) : "self_cpu_time_total"}});
    if (!s.ok()) throw LuaError(s.message());
    return 0;
  });
}

int ToSqlite(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTrace(L, 1, "to_sqlite");
    std::string path(CheckString(L, 2, "to_sqlite", "file path"));
    Status s = ExportTrace(*h->trace, "sqlite", path);
    if (!s.ok()) throw LuaError(s.message());
    return 0;
  });
}

// t:sql(query): the rows of one SQL statement over the tables t:to_sqlite writes, in a database
// built by the trace's first query and kept for the next ones.
int Sql(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTrace(L, 1, "sql");
    std::string query(CheckString(L, 2, "sql", "SQL statement"));
    if (h->database == nullptr) {
      auto built = TraceDatabase::Build(*h->trace);
      if (!built.ok()) throw LuaError(built.error().message);
      h->database = std::move(built.value());
    }
    auto rows = h->database->Query(query);
    if (!rows.ok()) throw LuaError(rows.error().message);
    PushRows(L, std::move(rows.value()), {});
    return 1;
  });
}

int Save(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTrace(L, 1, "save");
    std::string path(CheckString(L, 2, "save", "file path"));
    Status s = ExportTrace(*h->trace, "profsh", path);
    if (!s.ok()) throw LuaError(s.message());
    return 0;
  });
}

bool IdentMatches(lua_State* L, int value_index, const Trace& t, const Ident& id) {
  if (lua_type(L, value_index) == LUA_TNUMBER) {
    return !id.is_string && lua_tointeger(L, value_index) == id.number;
  }
  size_t len;
  const char* s = lua_tolstring(L, value_index, &len);
  return id.is_string ? t.str(id.str) == std::string_view(s, len)
                      : std::to_string(id.number) == std::string_view(s, len);
}

int Events(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTrace(L, 1, "events");
    Options opts(L, 2, "events",
                 {"name", "pattern", "kind", "cat", "pid", "tid", "from", "to", "ph", "limit"});
    const Trace& t = *h->trace;
    auto name = opts.String("name");
    auto pattern = opts.String("pattern");
    auto kind = opts.String("kind");
    if (kind) {
      static const char* const kKinds[] = {"cpu_op", "annotation", "runtime", "kernel",
                                           "copy",   "set",        "memory",  "other"};
      bool known = false;
      for (const char* k : kKinds) known |= *kind == k;
      if (!known) {
        throw LuaError(
            "bad option 'kind' to 'events' (cpu_op, annotation, runtime, kernel, copy, "
            "set, memory or other expected, got \"" +
            *kind + "\")");
      }
    }
    // Whether a name matches `pattern` (string.find's Lua pattern), decided once per name.
    std::vector<int8_t> category_match(kind ? t.categories.size() : 0, -1);
    std::vector<int8_t> pattern_match;
    if (pattern) pattern_match.assign(t.strings.size(), -1);
    auto name_matches = [&](uint32_t id) {
      int8_t& known = pattern_match[id];
      if (known >= 0) return known == 1;
      lua_getglobal(L, "string");
      lua_getfield(L, -1, "find");
      std::string_view s = t.str(id);
      lua_pushlstring(L, s.data(), s.size());
      lua_pushlstring(L, pattern->data(), pattern->size());
      if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
        std::string message = lua_tostring(L, -1) ? lua_tostring(L, -1) : "error";
        lua_pop(L, 2);
        throw LuaError("bad option 'pattern' to 'events' (" + message + ")");
      }
      known = lua_isnil(L, -1) ? 0 : 1;
      lua_pop(L, 2);
      return known == 1;
    };
    auto cat = opts.String("cat");
    auto ph = opts.String("ph");
    auto from = opts.Number("from");
    auto to = opts.Number("to");
    int64_t limit = opts.Int("limit", -1);
    std::optional<uint32_t> name_id, cat_string;
    if (name) {
      name_id = t.strings.Find(*name);
      if (!name_id) {
        lua_newtable(L);
        return 1;
      }
    }
    if (cat) {
      cat_string = t.strings.Find(*cat);
      if (!cat_string) {
        lua_newtable(L);
        return 1;
      }
    }
    // Which tracks pass the pid/tid filters, decided once per track.
    std::vector<uint8_t> track_ok(t.tracks.size(), 1);
    for (const char* key : {"pid", "tid"}) {
      opts.Push(key);
      int vi = lua_gettop(L);
      if (!lua_isnil(L, vi)) {
        if (lua_type(L, vi) != LUA_TNUMBER && lua_type(L, vi) != LUA_TSTRING) {
          std::string got = TypeName(L, vi);
          lua_pop(L, 1);
          throw LuaError(std::string("bad option '") + key +
                         "' to 'events' (number or string expected, got " + got + ")");
        }
        for (size_t k = 0; k < t.tracks.size(); ++k) {
          const Ident& id = key[0] == 'p' ? t.tracks[k].pid : t.tracks[k].tid;
          if (!IdentMatches(L, vi, t, id)) track_ok[k] = 0;
        }
      }
      lua_pop(L, 1);
    }
    const EventTable& ev = t.events;
    lua_newtable(L);
    lua_Integer out = 0;
    for (size_t i = 0; i < ev.size(); ++i) {
      if (limit >= 0 && out >= limit) break;
      if (name_id && ev.name(i) != *name_id) continue;
      if (pattern && !name_matches(ev.name(i))) continue;
      if (kind) {
        // Ranges take their kind from the category: decided once per category.
        const char ph_i = ev.phase(i);
        if (ph_i == 'X' || ph_i == 'B') {
          int8_t& known = category_match[ev.category(i)];
          if (known < 0) known = *kind == EventKindName(KindOfEvent(t, i)) ? 1 : 0;
          if (known == 0) continue;
        } else if (*kind != EventKindName(KindOfEvent(t, i))) {
          continue;
        }
      }
      if (cat_string && t.categories[ev.category(i)] != *cat_string) continue;
      if (ph && (ph->size() != 1 || ev.phase(i) != (*ph)[0])) continue;
      if (!track_ok[ev.track(i)]) continue;
      double ts = NsToUs(ev.ts(i) - t.begin_ns());
      double end = NsToUs(ev.end(i) - t.begin_ns());
      if (from && end < *from) continue;
      if (to && ts > *to) continue;
      PushEvent(L, t, i);
      lua_rawseti(L, -2, ++out);
    }
    return 1;
  });
}

void PushThread(lua_State* L, const Trace& t, uint32_t track, const std::vector<size_t>& counts) {
  lua_createtable(L, 0, 5);
  PushIdent(L, t, t.tracks[track].pid);
  lua_setfield(L, -2, "pid");
  PushIdent(L, t, t.tracks[track].tid);
  lua_setfield(L, -2, "tid");
  const ThreadInfo& info = t.thread(track);
  if (info.name != 0) {
    std::string_view s = t.str(info.name);
    lua_pushlstring(L, s.data(), s.size());
    lua_setfield(L, -2, "name");
  }
  if (info.has_sort_index) {
    lua_pushinteger(L, info.sort_index);
    lua_setfield(L, -2, "sort_index");
  }
  lua_pushinteger(L, static_cast<lua_Integer>(counts[track]));
  lua_setfield(L, -2, "events");
}

std::vector<size_t> EventsPerTrack(const Trace& t) {
  std::vector<size_t> counts(t.tracks.size(), 0);
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.events.phase(i) != 'M') counts[t.events.track(i)]++;
  }
  return counts;
}

int Processes(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTrace(L, 1, "processes");
    const Trace& t = *h->trace;
    auto counts = EventsPerTrack(t);
    lua_createtable(L, static_cast<int>(t.processes().size()), 0);
    lua_Integer i = 0;
    for (const ProcessInfo& p : t.processes()) {
      lua_createtable(L, 0, 5);
      PushIdent(L, t, p.pid);
      lua_setfield(L, -2, "pid");
      if (p.name != 0) {
        std::string_view s = t.str(p.name);
        lua_pushlstring(L, s.data(), s.size());
        lua_setfield(L, -2, "name");
      }
      if (p.labels != 0) {
        std::string_view s = t.str(p.labels);
        lua_pushlstring(L, s.data(), s.size());
        lua_setfield(L, -2, "labels");
      }
      if (p.has_sort_index) {
        lua_pushinteger(L, p.sort_index);
        lua_setfield(L, -2, "sort_index");
      }
      lua_createtable(L, static_cast<int>(p.tracks.size()), 0);
      lua_Integer k = 0;
      for (uint32_t track : p.tracks) {
        PushThread(L, t, track, counts);
        lua_rawseti(L, -2, ++k);
      }
      lua_setfield(L, -2, "threads");
      lua_rawseti(L, -2, ++i);
    }
    return 1;
  });
}

// trace:memory_timeline(): every allocation and free ("[memory]" events: torch's profile_memory
// or profsh's), in time order, with its process's running total on its device; per process the
// host memory's peak and what it still held at the end, and the same per GPU in `devices`.
int MemoryTimeline(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTrace(L, 1, "memory_timeline");
    const Trace& t = *h->trace;
    const profsh::MemoryTimeline m = BuildMemoryTimeline(t);
    lua_createtable(L, static_cast<int>(m.points.size()), 2);
    for (size_t k = 0; k < m.points.size(); ++k) {
      const MemoryPoint& p = m.points[k];
      const Track& track = t.tracks[p.track];
      lua_createtable(L, 0, 6);
      lua_pushnumber(L, NsToUs(p.ts - t.begin_ns()));
      lua_setfield(L, -2, "ts");
      lua_pushinteger(L, p.bytes);
      lua_setfield(L, -2, "bytes");
      lua_pushinteger(L, p.total);
      lua_setfield(L, -2, "total");
      PushIdent(L, t, track.pid);
      lua_setfield(L, -2, "pid");
      PushIdent(L, t, track.tid);
      lua_setfield(L, -2, "tid");
      lua_pushstring(L, m.devices[p.device].c_str());
      lua_setfield(L, -2, "device");
      lua_rawseti(L, -2, static_cast<lua_Integer>(k + 1));
    }
    auto push_figures = [&](const ProcessMemory& figures) {
      lua_pushinteger(L, figures.peak);
      lua_setfield(L, -2, "peak");
      lua_pushnumber(L, NsToUs(figures.peak_ts - t.begin_ns()));
      lua_setfield(L, -2, "peak_ts");
      lua_pushinteger(L, figures.at_end);
      lua_setfield(L, -2, "at_end");
    };
    // processes[pid] = {peak, peak_ts, at_end (host memory), devices = {["cuda:0"] = {...}}}
    lua_createtable(L, 0, static_cast<int>(m.processes.size()));
    for (const ProcessMemory& figures : m.processes) {
      if (lua_getfield(L, -1, figures.pid.c_str()) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_createtable(L, 0, 4);
        lua_pushinteger(L, 0);
        lua_setfield(L, -2, "peak");
        lua_pushinteger(L, 0);
        lua_setfield(L, -2, "at_end");
        lua_newtable(L);
        lua_setfield(L, -2, "devices");
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, figures.pid.c_str());
      }
      if (figures.device == "cpu") {
        push_figures(figures);
      } else {
        lua_getfield(L, -1, "devices");
        lua_createtable(L, 0, 3);
        push_figures(figures);
        lua_setfield(L, -2, figures.device.c_str());
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
    lua_setfield(L, -2, "processes");
    lua_pushinteger(L, m.peak);
    lua_setfield(L, -2, "peak");
    lua_pushinteger(L, m.at_end);
    lua_setfield(L, -2, "at_end");
    return 1;
  });
}

int Threads(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTrace(L, 1, "threads");
    const Trace& t = *h->trace;
    auto counts = EventsPerTrack(t);
    lua_createtable(L, static_cast<int>(t.tracks.size()), 0);
    for (uint32_t k = 0; k < t.tracks.size(); ++k) {
      PushThread(L, t, k, counts);
      lua_rawseti(L, -2, k + 1);
    }
    return 1;
  });
}

int TraceField(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTrace(L, 1, "index");
    const Trace& t = *h->trace;
    if (lua_type(L, 2) != LUA_TSTRING) {
      lua_pushnil(L);
      return 1;
    }
    std::string_view key = lua_tostring(L, 2);
    if (key == "duration") {
      lua_pushnumber(L, NsToUs(t.end_ns() - t.begin_ns()));
    } else if (key == "start") {
      lua_pushnumber(L, NsToUs(t.origin_ns + t.begin_ns()));
    } else if (key == "path") {
      lua_pushstring(L, t.source_path.c_str());
    } else if (key == "format") {
      lua_pushstring(L, t.source_format.c_str());
    } else if (key == "event_count") {
      lua_pushinteger(L, static_cast<lua_Integer>(t.events.size()));
    } else if (key == "warnings") {
      lua_createtable(L, static_cast<int>(t.warnings.size()), 0);
      for (size_t i = 0; i < t.warnings.size(); ++i) {
        lua_pushstring(L, t.warnings[i].c_str());
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
    } else if (key == "steps") {
      if (!t.has_steps) return 0;
      lua_createtable(L, 2, 0);
      lua_pushinteger(L, t.first_step);
      lua_rawseti(L, -2, 1);
      lua_pushinteger(L, t.last_step);
      lua_rawseti(L, -2, 2);
    } else if (key == "ranks") {
      PushTraceRanks(L, h);
    } else if (key == "step_num") {
      // torch's prof.step_num when on_trace_ready runs: the step after the window's last.
      if (!t.has_steps) return 0;
      lua_pushinteger(L, t.last_step + 1);
    } else if (key == "metadata") {
      lua_createtable(L, 0, static_cast<int>(t.metadata.size()));
      for (const auto& [k, v] : t.metadata) {
        auto j = nlohmann::json::parse(v, nullptr, false);
        if (j.is_discarded()) {
          lua_pushlstring(L, v.data(), v.size());
        } else {
          PushJson(L, j);
        }
        lua_setfield(L, -2, k.c_str());
      }
    } else {
      lua_pushnil(L);
    }
    return 1;
  });
}

std::string Plural(size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : noun.back() == 's' ? "es" : "s");
}

int TraceToString(lua_State* L) {
  return Protect(L, [&] {
    TraceHandle* h = CheckTrace(L, 1, "tostring");
    const Trace& t = *h->trace;
    size_t threads = 0;
    for (const auto& p : t.processes()) threads += p.tracks.size();
    std::string s =
        "<profsh.Trace " + (t.source_path.empty() ? std::string("(in memory)") : t.source_path) +
        ": " + Plural(t.events.size(), "event") + ", " + Plural(t.processes().size(), "process") +
        ", " + Plural(threads, "thread") + ", " + FormatDuration(t.end_ns() - t.begin_ns()) + ">";
    lua_pushlstring(L, s.data(), s.size());
    return 1;
  });
}

int TraceLen(lua_State* L) {
  return Protect(L, [&] {
    lua_pushinteger(L, static_cast<lua_Integer>(CheckTrace(L, 1, "len")->trace->events.size()));
    return 1;
  });
}

}  // namespace

std::shared_ptr<const FunctionEvents> TraceHandle::Events() {
  if (!events) events = BuildFunctionEvents(*trace);
  return events;
}

std::shared_ptr<const FunctionEvents> TraceHandle::Events(const IttSelection& itt) {
  if (itt.mode == IttSelection::Mode::kAuto) return Events();
  if (!events_by_itt || !(events_by_itt_selection == itt)) {
    events_by_itt = BuildFunctionEvents(*trace, itt);
    events_by_itt_selection = itt;
  }
  return events_by_itt;
}

std::string FormatDuration(int64_t ns) {
  char buf[64];
  double v = static_cast<double>(ns);
  if (ns >= 1000000000) {
    std::snprintf(buf, sizeof(buf), "%.3f s", v / 1e9);
  } else if (ns >= 1000000) {
    std::snprintf(buf, sizeof(buf), "%.3f ms", v / 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3f us", v / 1e3);
  }
  return buf;
}

void PushTrace(lua_State* L, std::shared_ptr<Trace> trace) {
  TraceHandle handle;
  handle.trace = std::move(trace);
  NewUserdata(L, kTraceType, std::move(handle));
}

TraceHandle* TestTrace(lua_State* L, int index) {
  return static_cast<TraceHandle*>(luaL_testudata(L, index, kTraceType));
}

void RegisterTrace(lua_State* L) {
  RegisterType(
      L, kTraceType,
      {{"key_averages", KeyAveragesMethod},
       {"export_chrome_trace", ExportChromeTrace},
       {"export_stacks", ExportStacks},
       {"save", Save},
       {"to_sqlite", ToSqlite},
       {"sql", Sql},
       {"events", Events},
       {"processes", Processes},
       {"flamegraph", TraceFlamegraph},
       {"export_speedscope", TraceSpeedscope},
       {"threads", Threads},
       {"memory_timeline", MemoryTimeline},
       {"launcher", TraceLauncher},
       {"kernels", TraceKernels},
       {"temporal_breakdown", TraceTemporalBreakdown},
       {"comm_comp_overlap", TraceCommCompOverlap},
       {"kernel_breakdown", TraceKernelBreakdown},
       {"annotation_breakdown", TraceAnnotationBreakdown},
       {"idle_time_breakdown", TraceIdleTimeBreakdown},
       {"kernel_launch_stats", TraceKernelLaunchStats},
       {"queue_length_summary", TraceQueueLengthSummary},
       {"counters", TraceCounters},
       {"stats", TraceStats},
       {"kernel_table", TraceKernelTable},
       {"step_breakdown", TraceStepBreakdown},
       {"gpu_summary", TraceGpuSummary},
       {"kernel_summary", TraceKernelSummary},
       {"compile_regions", TraceCompileRegions},
       {"graph_breaks", TraceGraphBreaks},
       {"kernel_provenance", TraceKernelProvenance},
       {"collectives", TraceCollectives},
       {"critical_path", TraceCriticalPath},
       {"samples", TraceSamples},
       {"hotspots", TraceHotspots},
       {"memory_summary", TraceMemorySummary},
       {"module_summary", TraceModuleSummary},
       {"distributed_summary", TraceDistributedSummary},
       {"recommendations", TraceRecommendations}},
      TraceField,
      {"duration", "start", "path", "format", "event_count", "warnings", "metadata", "steps",
       "step_num", "ranks"},
      {{"__gc", GcUserdata<TraceHandle>}, {"__tostring", TraceToString}, {"__len", TraceLen}});
  lua_pushcfunction(L, Load);
  lua_setfield(L, -2, "load");
  RegisterRanks(L);
  RegisterSummaries(L);
  RegisterCriticalPath(L);
  RegisterWhatIf(L);
}

}  // namespace profsh::lua
