// Analysis results in Lua: a list of plain row tables (column name -> value) whose metatable
// offers rows:table() (prints them aligned), rows:to_csv(path), rows.columns and rows.notes.
// The list is the only copy of the rows: table() and to_csv() read its row tables back (raw,
// no metamethods) and format them as the engine's AnalysisRows does, so they show what the list
// holds now (sorted, filtered or edited), and a result of a million rows is not kept twice.
#include "bindings/lua_api.h"
#include "bindings/lua_support.h"
#include "engine/analysis/ranks.h"

namespace profsh::lua {

namespace {

const char* const kRowsFormatType = "profsh.RowsFormat";

// What a list's methods need besides the list: its columns, its notes and the decimals each
// column's numbers print with (-1: as Cell::Format decides; nsys' reports fix some).
struct RowsFormat {
  std::vector<std::string> columns;
  std::vector<std::string> notes;
  std::vector<int> decimals;
};

const RowsFormat& FormatOf(lua_State* L) {
  return *static_cast<const RowsFormat*>(lua_touserdata(L, lua_upvalueindex(1)));
}

void CheckSelf(lua_State* L, const char* method) {
  if (!lua_istable(L, 1))
    throw LuaError(std::string("bad argument #1 to '") + method +
                   "' (rows expected; call it as rows:" + method + "(...))");
}

// The list given as the method's self (argument 1), read back into engine rows.
AnalysisRows ReadRows(lua_State* L, const char* method) {
  const RowsFormat& format = FormatOf(L);
  CheckSelf(L, method);
  AnalysisRows out;
  out.columns = format.columns;
  out.notes = format.notes;
  const lua_Unsigned count = lua_rawlen(L, 1);
  out.rows.reserve(count, format.columns.size());
  std::vector<Cell> row(format.columns.size());
  for (lua_Unsigned r = 1; r <= count; ++r) {
    lua_rawgeti(L, 1, static_cast<lua_Integer>(r));
    if (!lua_istable(L, -1)) {
      const std::string type = luaL_typename(L, -1);
      lua_pop(L, 1);
      throw LuaError(std::string(method) + ": row " + std::to_string(r) + " is a " + type +
                     ", not a table");
    }
    for (size_t c = 0; c < format.columns.size(); ++c) {
      lua_pushlstring(L, format.columns[c].data(), format.columns[c].size());
      lua_rawget(L, -2);
      Cell& cell = row[c];
      switch (lua_type(L, -1)) {
        case LUA_TNIL:
          cell = Cell::Empty();
          break;
        case LUA_TNUMBER:
          if (lua_isinteger(L, -1)) {
            cell = Cell::Int(lua_tointeger(L, -1));
          } else {
            cell = Cell::Double(lua_tonumber(L, -1));
            cell.decimals = format.decimals[c];
          }
          break;
        case LUA_TSTRING: {
          size_t size = 0;
          const char* text = lua_tolstring(L, -1, &size);
          cell = Cell::Text(std::string(text, size));
          break;
        }
        case LUA_TBOOLEAN:
          cell = Cell::Text(lua_toboolean(L, -1) ? "true" : "false");
          break;
        default: {
          const std::string type = luaL_typename(L, -1);
          lua_pop(L, 2);
          throw LuaError(std::string(method) + ": row " + std::to_string(r) + ", column '" +
                         format.columns[c] + "' holds a " + type);
        }
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    out.rows.push_back(row);
  }
  return out;
}

int RowsTable(lua_State* L) {
  // The text is on the stack, and no C++ object alive, before print runs (it may raise).
  Protect(L, [&] {
    const std::string text = ReadRows(L, "table").FormatTable();
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
    std::string text = ReadRows(L, "__tostring").FormatTable();
    lua_pushlstring(L, text.data(), text.size());
    return 1;
  });
}

int RowsToCsv(lua_State* L) {
  return Protect(L, [&] {
    CheckSelf(L, "to_csv");
    std::string path(CheckString(L, 2, "to_csv", "file path"));
    Status s = ReadRows(L, "to_csv").WriteCsv(path);
    if (!s.ok()) throw LuaError(s.message());
    return 0;
  });
}

// rows:across_ranks(): one row per key with min / median / max and the rank of the max of every
// numeric column (engine/analysis/ranks.h).
int RowsAcrossRanks(lua_State* L) {
  return Protect(L, [&] {
    PushRows(L, CrossRankView(ReadRows(L, "across_ranks")), {});
    return 1;
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

// Each column's decimals: those of its first number cell.
std::vector<int> ColumnDecimals(const AnalysisRows& rows) {
  std::vector<int> decimals(rows.columns.size(), -1);
  std::vector<bool> seen(rows.columns.size(), false);
  for (size_t r = 0; r < rows.rows.size(); ++r) {
    bool all_seen = true;
    for (size_t c = 0; c < rows.columns.size(); ++c) {
      if (seen[c]) continue;
      const Cell cell = rows.rows.cell(r, c);
      if (cell.kind == Cell::Kind::kDouble) {
        decimals[c] = cell.decimals;
        seen[c] = true;
      } else {
        all_seen = false;
      }
    }
    if (all_seen) break;
  }
  return decimals;
}

// Sets the metatable of the list on top of the stack: the methods as closures over `format`,
// plus columns, notes and the named fields of the table on top (popped), if any.
void SetRowsMetatable(lua_State* L, RowsFormat format, bool with_fields) {
  // Stack: list [fields]
  lua_createtable(L, 0, 3);  // metatable
  if (with_fields) {
    lua_rotate(L, -2, 1);  // list metatable fields
  } else {
    lua_createtable(L, 0, 4);  // list metatable fields
  }
  PushStrings(L, format.columns);
  lua_setfield(L, -2, "columns");
  PushStrings(L, format.notes);
  lua_setfield(L, -2, "notes");
  NewUserdata(L, kRowsFormatType, std::move(format));
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, RowsTable, 1);
  lua_setfield(L, -3, "table");
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, RowsToCsv, 1);
  lua_setfield(L, -3, "to_csv");
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, RowsAcrossRanks, 1);
  lua_setfield(L, -3, "across_ranks");
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
  // The other lists first, so that each one's engine rows are gone before the next is made.
  lua_createtable(L, 0, static_cast<int>(lists.size() + selections.size()));
  const int fields = lua_gettop(L);
  for (auto& [name, other] : lists) {
    PushRows(L, std::move(other), {});
    lua_setfield(L, fields, name);
  }
  std::vector<int> decimals = ColumnDecimals(rows);
  const int width = static_cast<int>(rows.columns.size());
  lua_createtable(L, static_cast<int>(rows.rows.size()), 0);
  const int list = lua_gettop(L);
  for (size_t r = 0; r < rows.rows.size(); ++r) {
    lua_createtable(L, 0, width);
    for (size_t c = 0; c < rows.columns.size(); ++c) {
      PushCell(L, rows.rows.cell(r, c));
      lua_setfield(L, -2, rows.columns[c].c_str());
    }
    lua_rawseti(L, list, static_cast<lua_Integer>(r + 1));
    // The engine's copy goes as the Lua one grows: a result never exists twice in full.
    if (r % 4096 == 4095) rows.rows.ReleaseBefore(r + 1);
  }
  RowsFormat format{std::move(rows.columns), std::move(rows.notes), std::move(decimals)};
  rows.rows = RowList();  // the list is the copy that stays
  // A selection lists the same row tables as the result: a row is made once, whatever the
  // number of lists it is in.
  for (RowsSelection& selection : selections) {
    lua_createtable(L, static_cast<int>(selection.rows.size()), 0);
    for (size_t i = 0; i < selection.rows.size(); ++i) {
      lua_rawgeti(L, list, static_cast<lua_Integer>(selection.rows[i]) + 1);
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    SetRowsMetatable(L, format, false);
    lua_setfield(L, fields, selection.name);
  }
  lua_rotate(L, fields, 1);  // list fields
  SetRowsMetatable(L, std::move(format), true);
}

void RegisterRows(lua_State* L) {
  luaL_newmetatable(L, kRowsFormatType);
  lua_pushcfunction(L, GcUserdata<RowsFormat>);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
}

}  // namespace profsh::lua
