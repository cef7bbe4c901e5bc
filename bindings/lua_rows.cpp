// Analysis results in Lua: a list of plain row tables (column name -> value) whose metatable
// offers rows:table() (prints them aligned), rows:to_csv(path), rows.columns and rows.notes.
// The formatting is the engine's (AnalysisRows), kept as an upvalue, so it never reads Lua
// tables back.
#include "bindings/lua_api.h"
#include "bindings/lua_support.h"

#include <memory>
#include <optional>

namespace profsh::lua {

namespace {

const char* const kRowsDataType = "profsh.RowsData";

// What a list's methods format: the engine's rows, or a selection of them (the rows of a view
// such as kernel_launch_stats' long_delays, kept once for the result and its views).
struct RowsData {
  std::shared_ptr<const AnalysisRows> rows;
  std::optional<std::vector<uint32_t>> only;
  const std::vector<uint32_t>* Only() const { return only ? &*only : nullptr; }
};

RowsData* RowsOf(lua_State* L) {
  return static_cast<RowsData*>(lua_touserdata(L, lua_upvalueindex(1)));
}

int RowsTable(lua_State* L) {
  // The text is on the stack, and no C++ object alive, before print runs (it may raise).
  Protect(L, [&] {
    const RowsData* data = RowsOf(L);
    const std::string text = data->rows->FormatTable(data->Only());
    lua_pushlstring(L, text.data(), text.empty() ? 0 : text.size() - 1);  // print adds the newline
    return 1;
  });
  lua_getglobal(L, "print");
  lua_insert(L, -2);
  lua_call(L, 1, 0);
  return 0;
}

int RowsToString(lua_State* L) {
  return Protect(L, [&] {
    const RowsData* data = RowsOf(L);
    std::string text = data->rows->FormatTable(data->Only());
    lua_pushlstring(L, text.data(), text.size());
    return 1;
  });
}

int RowsToCsv(lua_State* L) {
  return Protect(L, [&] {
    std::string path(CheckString(L, 2, "to_csv", "file path"));
    const RowsData* data = RowsOf(L);
    Status s = data->rows->WriteCsv(path, data->Only());
    if (!s.ok()) throw LuaError(s.message());
    return 0;
  });
}

void PushCell(lua_State* L, const Cell& cell) {
  switch (cell.kind) {
    case Cell::Kind::kEmpty:
      lua_pushnil(L);
      break;
    case Cell::Kind::kInt:
      lua_pushinteger(L, cell.int_value);
      break;
    case Cell::Kind::kDouble:
      lua_pushnumber(L, cell.double_value);
      break;
    case Cell::Kind::kText:
      lua_pushlstring(L, cell.text.data(), cell.text.size());
      break;
  }
}

void PushStrings(lua_State* L, const std::vector<std::string>& strings) {
  lua_createtable(L, static_cast<int>(strings.size()), 0);
  for (size_t i = 0; i < strings.size(); ++i) {
    lua_pushlstring(L, strings[i].data(), strings[i].size());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

}  // namespace

namespace {

// Sets the metatable of the list on top of the stack: methods as closures over the engine's rows,
// plus columns, notes and the named fields on the table at `fields` (popped), if any.
void SetRowsMetatable(lua_State* L, const AnalysisRows& rows, RowsData data, bool with_fields) {
  // Stack: list [fields]
  lua_createtable(L, 0, 3);  // metatable
  if (with_fields) {
    lua_rotate(L, -2, 1);  // list metatable fields
  } else {
    lua_createtable(L, 0, 4);  // list metatable fields
  }
  PushStrings(L, rows.columns);
  lua_setfield(L, -2, "columns");
  PushStrings(L, rows.notes);
  lua_setfield(L, -2, "notes");
  NewUserdata(L, kRowsDataType, std::move(data));
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, RowsTable, 1);
  lua_setfield(L, -3, "table");
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, RowsToCsv, 1);
  lua_setfield(L, -3, "to_csv");
  lua_pushcclosure(L, RowsToString, 1);  // takes the userdata off the stack
  lua_setfield(L, -3, "__tostring");
  lua_setfield(L, -2, "__index");
  lua_pushstring(L, "profsh.Rows");
  lua_setfield(L, -2, "__name");
  lua_setmetatable(L, -2);
}

}  // namespace

void PushRows(lua_State* L, AnalysisRows rows,
              std::vector<std::pair<const char*, AnalysisRows>> lists,
              std::vector<RowsSelection> selections) {
  rows.rows.ShrinkToFit();  // kept as long as the Lua list
  auto shared = std::make_shared<const AnalysisRows>(std::move(rows));
  const AnalysisRows& all = *shared;
  const int width = static_cast<int>(all.columns.size());
  lua_createtable(L, static_cast<int>(all.rows.size()), 0);
  const int list = lua_gettop(L);
  for (size_t r = 0; r < all.rows.size(); ++r) {
    lua_createtable(L, 0, width);
    for (size_t c = 0; c < all.columns.size(); ++c) {
      PushCell(L, all.rows.cell(r, c));
      lua_setfield(L, -2, all.columns[c].c_str());
    }
    lua_rawseti(L, list, static_cast<lua_Integer>(r + 1));
  }
  lua_createtable(L, 0, static_cast<int>(lists.size() + selections.size()));  // fields
  for (auto& [name, other] : lists) {
    PushRows(L, std::move(other), {});
    lua_setfield(L, -2, name);
  }
  // A selection lists the same row tables as the result, and formats from the same engine
  // rows: a row is made once, whatever the number of lists it is in.
  for (RowsSelection& selection : selections) {
    lua_createtable(L, static_cast<int>(selection.rows.size()), 0);
    for (size_t i = 0; i < selection.rows.size(); ++i) {
      lua_rawgeti(L, list, static_cast<lua_Integer>(selection.rows[i]) + 1);
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    SetRowsMetatable(L, all, RowsData{shared, std::move(selection.rows)}, false);
    lua_setfield(L, -2, selection.name);
  }
  SetRowsMetatable(L, all, RowsData{shared, std::nullopt}, true);
}

void RegisterRows(lua_State* L) {
  luaL_newmetatable(L, kRowsDataType);
  lua_pushcfunction(L, GcUserdata<RowsData>);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
}

}  // namespace profsh::lua
