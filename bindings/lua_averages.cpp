// The averages list returned by trace:key_averages() and its elements (torch's EventList of
// FunctionEventAvg): #avgs, avgs[i], ipairs(avgs), avgs:table{...}, and the numeric fields.
#include <algorithm>
#include <cstring>

#include "bindings/lua_api.h"
#include "bindings/lua_support.h"
#include "engine/analysis/averages_table.h"
#include "engine/util/edit_distance.h"

namespace profsh::lua {

namespace {

const char* const kAveragesType = "profsh.Averages";
const char* const kAvgType = "profsh.Avg";

struct AveragesHandle {
  std::shared_ptr<const KeyAverages> averages;
};

struct AvgHandle {
  std::shared_ptr<const KeyAverages> parent;
  AverageRow row;
  bool is_total = false;  // total_average(): its key is "Total", not an event name

  std::string_view Key() const {
    return is_total ? std::string_view("Total") : parent->events->strings.Get(row.key);
  }
};

AveragesHandle* CheckAverages(lua_State* L, int index, const char* function) {
  return CheckUserdata<AveragesHandle>(L, index, kAveragesType, function);
}

void PushAvg(lua_State* L, std::shared_ptr<const KeyAverages> parent, const AverageRow& row,
             bool is_total = false) {
  NewUserdata(L, kAvgType, AvgHandle{std::move(parent), row, is_total});
}

TableOptions ReadTableOptions(lua_State* L, int index) {
  Options opts(
      L, index, "table",
      {"sort_by", "row_limit", "max_src_column_width", "max_name_column_width",
       "max_shapes_column_width", "header", "top_level_events_only", "time_unit", "torch_format"});
  TableOptions t;
  t.sort_by = opts.String("sort_by");
  auto limit = opts.IntOrNone("row_limit", 100);
  t.row_limit = limit ? *limit : -1;
  t.max_src_column_width = opts.IntOrNone("max_src_column_width", 75);
  t.max_name_column_width = opts.IntOrNone("max_name_column_width", 55);
  t.max_shapes_column_width = opts.IntOrNone("max_shapes_column_width", 80);
  t.header = opts.String("header");
  t.top_level_events_only = opts.Bool("top_level_events_only", false);
  t.time_unit = opts.String("time_unit");
  if (t.time_unit && *t.time_unit != "s" && *t.time_unit != "ms" && *t.time_unit != "us") {
    throw LuaError("bad option 'time_unit' to 'table' (\"s\", \"ms\" or \"us\" expected, got \"" +
                   *t.time_unit + "\")");
  }
  t.torch_format = ReadTorchFormat(opts, "table");
  return t;
}

std::string Table(const KeyAverages& averages, const TableOptions& options) {
  auto text = BuildAveragesTable(averages, options);
  if (!text.ok()) throw LuaError(text.error().message);
  return std::move(text.value());
}

int TableMethod(lua_State* L) {
  return Protect(L, [&] {
    AveragesHandle* h = CheckAverages(L, 1, "table");
    TableOptions options = ReadTableOptions(L, 2);
    std::string text = Table(*h->averages, options);
    lua_pushlstring(L, text.data(), text.size());
    return 1;
  });
}

int Sorted(lua_State* L) {
  return Protect(L, [&] {
    AveragesHandle* h = CheckAverages(L, 1, "sorted");
    std::string key(CheckString(L, 2, "sorted", "sort key"));
    auto order = SortedRowOrder(*h->averages, key);
    if (!order.ok()) throw LuaError(order.error().message);
    lua_createtable(L, static_cast<int>(order.value().size()), 0);
    lua_Integer i = 0;
    for (uint32_t index : order.value()) {
      PushAvg(L, h->averages, h->averages->rows[index]);
      lua_rawseti(L, -2, ++i);
    }
    return 1;
  });
}

int TotalAverage(lua_State* L) {
  return Protect(L, [&] {
    AveragesHandle* h = CheckAverages(L, 1, "total_average");
    AverageRow total;
    for (const AverageRow& r : h->averages->rows) {
      total.count += r.count;
      total.cpu_time_total_ns += r.cpu_time_total_ns;
      total.cuda_time_total_ns += r.cuda_time_total_ns;
      total.self_cpu_time_total_ns += r.self_cpu_time_total_ns;
      total.self_cuda_time_total_ns += r.self_cuda_time_total_ns;
      total.cpu_time_total_us += r.cpu_time_total_us;
      total.cuda_time_total_us += r.cuda_time_total_us;
      total.self_cpu_time_total_us += r.self_cpu_time_total_us;
      total.self_cuda_time_total_us += r.self_cuda_time_total_us;
      total.cpu_memory_usage += r.cpu_memory_usage;
      total.cuda_memory_usage += r.cuda_memory_usage;
      total.self_cpu_memory_usage += r.self_cpu_memory_usage;
      total.self_cuda_memory_usage += r.self_cuda_memory_usage;
      total.flops += r.flops;
      total.self_cpu_samples += r.self_cpu_samples;
      total.cpu_samples += r.cpu_samples;
      total.tc_self_ns += r.tc_self_ns;
      total.tc_total_ns += r.tc_total_ns;
      total.tc_eligible = total.tc_eligible || r.tc_eligible;
    }
    PushAvg(L, h->averages, total, /*is_total=*/true);
    return 1;
  });
}

std::vector<size_t> RowsNamed(const KeyAverages& a, std::string_view name) {
  std::vector<size_t> rows;
  auto id = a.events->strings.Find(name);
  if (!id) return rows;
  for (size_t i = 0; i < a.rows.size(); ++i) {
    if (a.rows[i].key == *id) rows.push_back(i);
  }
  return rows;
}

int AveragesIndex(lua_State* L) {
  return Protect(L, [&] {
    AveragesHandle* h = CheckAverages(L, 1, "index");
    if (lua_type(L, 2) == LUA_TNUMBER) {
      int isnum = 0;
      lua_Integer i = lua_tointegerx(L, 2, &isnum);
      const auto& rows = h->averages->rows;
      if (!isnum || i < 1 || static_cast<size_t>(i) > rows.size()) {
        lua_pushnil(L);
      } else {
        PushAvg(L, h->averages, rows[static_cast<size_t>(i - 1)]);
      }
      return 1;
    }
    if (lua_type(L, 2) == LUA_TSTRING) {
      std::string_view key = lua_tostring(L, 2);
      const KeyAverages& a = *h->averages;
      if (key == "group_by_input_shape") {
        lua_pushboolean(L, a.group_by_input_shape);
        return 1;
      }
      if (key == "group_by_stack_n") {
        lua_pushinteger(L, a.group_by_stack_n);
        return 1;
      }
      if (key == "profile_memory") {
        lua_pushboolean(L, a.profile_memory);
        return 1;
      }
      if (key == "with_flops") {
        lua_pushboolean(L, a.with_flops);
        return 1;
      }
      // The ITT tasks the view left out (key_averages{itt_domains=...} brings them in).
      if (key == "itt_tasks_left_out") {
        lua_pushinteger(L, static_cast<lua_Integer>(a.events->itt_tasks_left_out));
        return 1;
      }
      if (key == "itt_domains_left_out") {
        const auto& domains = a.events->itt_domains_left_out;
        lua_createtable(L, static_cast<int>(domains.size()), 0);
        for (size_t i = 0; i < domains.size(); ++i) {
          lua_pushlstring(L, domains[i].data(), domains[i].size());
          lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
        }
        return 1;
      }
      // A row by its name, when exactly one row has it: keys are not unique (a CPU range and
      // its GPU-side annotation share a name; so do an op's rows by input shape), and a nil
      // would hide the row that was not picked.
      std::vector<size_t> rows = RowsNamed(a, key);
      if (rows.size() == 1) {
        PushAvg(L, h->averages, a.rows[rows[0]]);
        return 1;
      }
      if (rows.empty()) {
        std::vector<std::string_view> names;
        for (const AverageRow& r : a.rows) names.push_back(a.events->strings.Get(r.key));
        std::string hint = ClosestName(key, names, std::max<size_t>(4, key.size() / 3));
        throw LuaError("no row is named '" + std::string(key) + "'" +
                       (hint.empty() ? "" : "; did you mean '" + hint + "'?") +
                       " (avgs:find(name) returns every row of a name, possibly none)");
      }
      // What tells them apart, counted: "annotation CPU, annotation CUDA", or by input shape
      // "cpu_op CPU x20" and the grouping.
      std::vector<std::pair<std::string, size_t>> kinds;
      for (size_t i : rows) {
        std::string k = std::string(EventKindName(a.rows[i].kind)) + " " +
                        (a.rows[i].device == DeviceType::kCpu ? "CPU" : "CUDA");
        auto it =
            std::find_if(kinds.begin(), kinds.end(), [&](const auto& e) { return e.first == k; });
        if (it == kinds.end()) {
          kinds.emplace_back(k, 1);
        } else {
          ++it->second;
        }
      }
      std::string what;
      for (const auto& [k, n] : kinds)
        what += (what.empty() ? "" : ", ") + k + (n > 1 ? " x" + std::to_string(n) : "");
      if (a.group_by_input_shape) what += "; grouped by input shape";
      if (a.group_by_stack_n > 0) what += "; grouped by stack";
      throw LuaError(std::to_string(rows.size()) + " rows are named '" + std::string(key) + "' (" +
                     what + "): avgs:find(\"" + std::string(key) +
                     "\") returns them all, each with its kind and device_type");
    }
    lua_pushnil(L);
    return 1;
  });
}

// avgs:find(name [, kind]) -> the rows of that name (of that kind), in the list's order.
int Find(lua_State* L) {
  return Protect(L, [&] {
    AveragesHandle* h = CheckAverages(L, 1, "find");
    std::string name(CheckString(L, 2, "find", "row name"));
    auto kind = OptString(L, 3, "find", "kind");
    const KeyAverages& a = *h->averages;
    lua_newtable(L);
    lua_Integer out = 0;
    for (size_t i : RowsNamed(a, name)) {
      if (kind && *kind != EventKindName(a.rows[i].kind)) continue;
      PushAvg(L, h->averages, a.rows[i]);
      lua_rawseti(L, -2, ++out);
    }
    return 1;
  });
}

int AveragesLen(lua_State* L) {
  return Protect(L, [&] {
    lua_pushinteger(L, static_cast<lua_Integer>(CheckAverages(L, 1, "len")->averages->rows.size()));
    return 1;
  });
}

int AveragesToString(lua_State* L) {
  return Protect(L, [&] {
    AveragesHandle* h = CheckAverages(L, 1, "tostring");
    std::string text = Table(*h->averages, TableOptions{});
    lua_pushlstring(L, text.data(), text.size());
    return 1;
  });
}

// An input value as Lua values: lists as sequences (a None inside is nil, as in t:events' args),
// a dict as a table by key, integers as integers.
void PushInputValue(lua_State* L, const InputValue& v) {
  switch (v.type) {
    case InputValue::Type::kNone:
      lua_pushnil(L);
      return;
    case InputValue::Type::kBool:
      lua_pushboolean(L, v.integer != 0);
      return;
    case InputValue::Type::kInt:
    case InputValue::Type::kUInt:  // its bits, as Lua's own integers wrap
      lua_pushinteger(L, static_cast<lua_Integer>(v.integer));
      return;
    case InputValue::Type::kFloat:
      lua_pushnumber(L, v.real);
      return;
    case InputValue::Type::kString:
    case InputValue::Type::kText:
      lua_pushlstring(L, v.text.data(), v.text.size());
      return;
    case InputValue::Type::kList:
      lua_createtable(L, static_cast<int>(v.items.size()), 0);
      for (size_t i = 0; i < v.items.size(); ++i) {
        PushInputValue(L, v.items[i]);
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
      return;
    case InputValue::Type::kDict:
      lua_createtable(L, 0, static_cast<int>(v.items.size() / 2));
      for (size_t i = 0; i + 1 < v.items.size(); i += 2) {
        lua_pushlstring(L, v.items[i].text.data(), v.items[i].text.size());
        PushInputValue(L, v.items[i + 1]);
        lua_rawset(L, -3);
      }
      return;
  }
}

// An input field of a row: its first event's, when the list is grouped by input shape; "" when
// it is not, as torch's key_averages() sets input_shapes.
void PushInputs(lua_State* L, const AvgHandle& h, uint32_t value) {
  if (!h.parent->group_by_input_shape) {
    lua_pushliteral(L, "");
    return;
  }
  PushInputValue(L, h.parent->events->inputs.Get(value));
}

int AvgField(lua_State* L) {
  return Protect(L, [&] {
    AvgHandle* h = CheckUserdata<AvgHandle>(L, 1, kAvgType, "index");
    if (lua_type(L, 2) != LUA_TSTRING) {
      lua_pushnil(L);
      return 1;
    }
    std::string key(lua_tostring(L, 2));
    for (const char* alias : {"device", "xpu", "privateuse1"}) {
      size_t pos = key.find(alias);
      if (pos != std::string::npos && key != "device_type") {
        key.replace(pos, std::strlen(alias), "cuda");
        break;
      }
    }
    const AverageRow& r = h->row;
    if (key == "key") {
      std::string_view s = h->Key();
      lua_pushlstring(L, s.data(), s.size());
    } else if (key == "count") {
      lua_pushinteger(L, r.count);
    } else if (key == "cpu_time_total") {
      lua_pushnumber(L, r.cpu_time_total_us);
    } else if (key == "self_cpu_time_total") {
      lua_pushnumber(L, r.self_cpu_time_total_us);
    } else if (key == "cpu_time") {
      lua_pushnumber(L, r.cpu_time_us());
    } else if (key == "cuda_time_total") {
      lua_pushnumber(L, r.cuda_time_total_us);
    } else if (key == "self_cuda_time_total") {
      lua_pushnumber(L, r.self_cuda_time_total_us);
    } else if (key == "cuda_time") {
      lua_pushnumber(L, r.cuda_time_us());
    } else if (key == "cpu_memory_usage") {
      lua_pushinteger(L, r.cpu_memory_usage);
    } else if (key == "self_cpu_memory_usage") {
      lua_pushinteger(L, r.self_cpu_memory_usage);
    } else if (key == "cuda_memory_usage") {
      lua_pushinteger(L, r.cuda_memory_usage);
    } else if (key == "self_cuda_memory_usage") {
      lua_pushinteger(L, r.self_cuda_memory_usage);
    } else if (key == "flops") {
      lua_pushinteger(L, r.flops);
    } else if (key == "self_cpu_samples") {
      lua_pushinteger(L, r.self_cpu_samples);
    } else if (key == "cpu_samples") {
      lua_pushinteger(L, r.cpu_samples);
    } else if (key == "tc_eligible") {
      lua_pushboolean(L, r.tc_eligible);
    } else if (key == "tc_self_ratio") {  // the plugin's names for percentages
      lua_pushnumber(L, r.tc_self_pct());
    } else if (key == "tc_total_ratio") {
      lua_pushnumber(L, r.tc_total_pct());
    } else if (key == "input_shapes") {
      PushInputs(L, *h, r.input_shapes);
    } else if (key == "input_types") {
      PushInputs(L, *h, r.input_types);
    } else if (key == "concrete_inputs") {
      PushInputs(L, *h, r.concrete_inputs);
    } else if (key == "stack") {
      lua_createtable(L, static_cast<int>(r.stack.size()), 0);
      for (size_t i = 0; i < r.stack.size(); ++i) {
        std::string_view s = h->parent->events->strings.Get(r.stack[i]);
        lua_pushlstring(L, s.data(), s.size());
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
    } else if (key == "kind") {
      lua_pushstring(L, h->is_total ? "total" : EventKindName(r.kind));
    } else if (key == "device_type") {
      lua_pushstring(L, r.device == DeviceType::kCpu ? "CPU" : "CUDA");
    } else if (key == "is_async") {
      lua_pushboolean(L, false);  // traces cannot express torch's async (cross-thread) ops
    } else if (key == "node_id") {
      lua_pushinteger(L, -1);
    } else {
      lua_pushnil(L);
    }
    return 1;
  });
}

int AvgToString(lua_State* L) {
  return Protect(L, [&] {
    AvgHandle* h = CheckUserdata<AvgHandle>(L, 1, kAvgType, "tostring");
    const AverageRow& r = h->row;
    std::string key(h->Key());
    std::string s =
        "<FunctionEventAvg key=" + key + " self_cpu_time=" + FormatTime(r.self_cpu_time_total_us) +
        " cpu_time=" + FormatTime(r.cpu_time_us()) +
        "  self_cuda_time=" + FormatTime(r.self_cuda_time_total_us) +
        " cuda_time=" + FormatTime(r.cuda_time_us()) + " count=" + std::to_string(r.count) +
        " cpu_memory_usage=" + std::to_string(r.cpu_memory_usage) +
        " cuda_memory_usage=" + std::to_string(r.cuda_memory_usage) + ">";
    lua_pushlstring(L, s.data(), s.size());
    return 1;
  });
}

}  // namespace

std::optional<TorchFormat> ReadTorchFormat(const Options& opts, const char* function) {
  auto text = opts.String("torch_format");
  if (!text) return std::nullopt;
  if (*text == "1.13") return TorchFormat::k113;
  if (*text == "2") return TorchFormat::k2;
  throw LuaError(std::string("bad option 'torch_format' to '") + function +
                 "' (\"1.13\" or \"2\" expected, got \"" + *text + "\")");
}

void PushKeyAverages(lua_State* L, KeyAverages averages) {
  NewUserdata(L, kAveragesType,
              AveragesHandle{std::make_shared<const KeyAverages>(std::move(averages))});
}

bool IsKeyAverages(lua_State* L, int index) {
  return luaL_testudata(L, index, kAveragesType) != nullptr;
}

void RegisterAverages(lua_State* L) {
  RegisterType(
      L, kAveragesType,
      {{"table", TableMethod}, {"sorted", Sorted}, {"total_average", TotalAverage}, {"find", Find}},
      AveragesIndex,
      {"group_by_input_shape", "group_by_stack_n", "profile_memory", "with_flops",
       "itt_tasks_left_out", "itt_domains_left_out"},
      {{"__gc", GcUserdata<AveragesHandle>},
       {"__len", AveragesLen},
       {"__tostring", AveragesToString}});
  RegisterType(L, kAvgType, {}, AvgField,
               {"key",
                "count",
                "cpu_time_total",
                "self_cpu_time_total",
                "cpu_time",
                "cuda_time_total",
                "self_cuda_time_total",
                "cuda_time",
                "cpu_memory_usage",
                "self_cpu_memory_usage",
                "cuda_memory_usage",
                "self_cuda_memory_usage",
                "input_shapes",
                "input_types",
                "concrete_inputs",
                "stack",
                "flops",
                "device_type",
                "kind",
                "is_async",
                "node_id",
                "self_cpu_samples",
                "cpu_samples",
                "tc_eligible",
                "tc_self_ratio",
                "tc_total_ratio"},
               {{"__gc", GcUserdata<AvgHandle>}, {"__tostring", AvgToString}});
}

}  // namespace profsh::lua
