// Reports from Lua templates. The template API (report:section, :table, :chart, ...) is Lua,
// in prelude/report.lua, so a mistake in a template is reported at the template's own line; it
// builds the document as plain tables, and the writer here (handed to the library, not in the
// profsh table) reads them into the engine's document (engine/report/document.h) and writes
// HTML or Markdown.
#include <cmath>
#include <cstring>

#include "bindings/chunk_names.h"
#include "bindings/lua_api.h"
#include "bindings/lua_support.h"
#include "engine/report/document.h"
#include "engine/report/escape.h"
#include "engine/report/line_downsample.h"
#include "engine/report/render.h"
#include "engine/report/timeline_overview.h"

namespace profsh::lua {

namespace {

const char* const kTraceType = "profsh.Trace";

// Reading the document: each function reads the table on top of the stack.
std::string Field(lua_State* L, const char* key, const std::string& where) {
  lua_getfield(L, -1, key);
  std::string out;
  if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) {
    size_t size = 0;
    const char* s = lua_tolstring(L, -1, &size);
    out.assign(s, size);
  } else if (!lua_isnil(L, -1)) {
    const std::string type = luaL_typename(L, -1);
    lua_pop(L, 1);
    throw LuaError(where + ": '" + key + "' must be a string, not a " + type);
  }
  lua_pop(L, 1);
  return out;
}

// A whole number in [lo, hi] (a default when absent); NaN, fractions and out-of-range values are
// the template's error, named by `where` and the field.
int64_t IntegerField(lua_State* L, const char* key, int64_t fallback, int64_t lo, int64_t hi,
                     const std::string& where) {
  lua_getfield(L, -1, key);
  int64_t v = fallback;
  if (!lua_isnil(L, -1)) {
    const double d = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : std::nan("");
    if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) || d != std::floor(d)) {
      lua_pop(L, 1);
      throw LuaError(where + ": '" + key + "' must be a whole number from " + std::to_string(lo) +
                     " to " + std::to_string(hi));
    }
    v = static_cast<int64_t>(d);
  }
  lua_pop(L, 1);
  return v;
}

bool BoolField(lua_State* L, const char* key) {
  lua_getfield(L, -1, key);
  const bool v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

// Calls `each(k)` with the list's k-th element on top of the stack (1-based), for key's list.
template <typename F>
void ForList(lua_State* L, const char* key, const std::string& where, F each) {
  if (lua_getfield(L, -1, key) != LUA_TTABLE) {
    const bool missing = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (missing) return;
    throw LuaError(where + ": '" + key + "' must be a list");
  }
  const lua_Unsigned n = lua_rawlen(L, -1);
  for (lua_Unsigned k = 1; k <= n; ++k) {
    lua_rawgeti(L, -1, static_cast<lua_Integer>(k));
    each(static_cast<size_t>(k));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

std::string TopString(lua_State* L, const std::string& where) {
  if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER) {
    throw LuaError(where + " must be a string, not a " + luaL_typename(L, -1));
  }
  size_t size = 0;
  const char* s = lua_tolstring(L, -1, &size);
  return std::string(s, size);
}

double TopNumber(lua_State* L, const std::string& where) {
  if (lua_isnil(L, -1)) return std::nan("");
  if (!lua_isnumber(L, -1))
    throw LuaError(where + " must be a number, not a " + luaL_typename(L, -1));
  return lua_tonumber(L, -1);
}

Cell TopCell(lua_State* L, const std::string& where) {
  switch (lua_type(L, -1)) {
    case LUA_TNIL:
      return Cell::Empty();
    case LUA_TBOOLEAN:
      return Cell::Text(lua_toboolean(L, -1) ? "true" : "false");
    case LUA_TNUMBER:
      return lua_isinteger(L, -1) ? Cell::Int(lua_tointeger(L, -1))
                                  : Cell::Double(lua_tonumber(L, -1));
    case LUA_TSTRING:
      return Cell::Text(TopString(L, where));
    default:
      throw LuaError(where + " holds a " + luaL_typename(L, -1));
  }
}

report::Table ReadTable(lua_State* L, const std::string& where) {
  report::Table t;
  t.caption = Field(L, "caption", where);
  ForList(L, "columns", where, [&](size_t) {
    t.columns.push_back({Field(L, "name", where), Field(L, "unit", where)});
  });
  ForList(L, "rows", where, [&](size_t r) {
    std::vector<Cell> row(t.columns.size());
    for (size_t c = 0; c < t.columns.size(); ++c) {
      lua_rawgeti(L, -1, static_cast<lua_Integer>(c + 1));
      row[c] =
          TopCell(L, where + ", row " + std::to_string(r) + ", column '" + t.columns[c].name + "'");
      lua_pop(L, 1);
    }
    t.rows.push_back(std::move(row));
  });
  ForList(L, "notes", where, [&](size_t) { t.notes.push_back(TopString(L, where + ": a note")); });
  t.sort_column = static_cast<int>(IntegerField(L, "sort_column", 0, 0,
                                                static_cast<int64_t>(t.columns.size()), where)) -
                  1;
  t.descending = BoolField(L, "descending");
  t.total_rows = static_cast<size_t>(
      IntegerField(L, "total_rows", static_cast<int64_t>(t.rows.size()),
                   static_cast<int64_t>(t.rows.size()), int64_t{1} << 53, where));
  return t;
}

report::Chart ReadChart(lua_State* L, const std::string& where) {
  report::Chart c;
  const std::string kind = Field(L, "chart", where);
  if (kind == "bar")
    c.kind = report::ChartKind::kBar;
  else if (kind == "stacked")
    c.kind = report::ChartKind::kStackedBar;
  else if (kind == "line")
    c.kind = report::ChartKind::kLine;
  else
    throw LuaError(where + ": unknown chart kind '" + kind + "' (bar, stacked, line)");
  c.title = Field(L, "title", where);
  c.x_name = Field(L, "x_name", where);
  c.unit = Field(L, "unit", where);
  c.step = BoolField(L, "step");
  ForList(L, "categories", where,
          [&](size_t) { c.categories.push_back(TopString(L, where + ": a category")); });
  ForList(L, "x", where, [&](size_t) { c.x.push_back(TopNumber(L, where + ": an x value")); });
  ForList(L, "series", where, [&](size_t) {
    report::ChartSeries s;
    s.name = Field(L, "name", where);
    ForList(L, "values", where,
            [&](size_t) { s.values.push_back(TopNumber(L, where + ": a value")); });
    c.series.push_back(std::move(s));
  });
  for (size_t k = 0; k < c.series.size(); ++k) {
    const size_t points = c.kind == report::ChartKind::kLine ? c.x.size() : c.categories.size();
    if (c.series[k].values.size() != points)
      throw LuaError(where + ": series " + std::to_string(k + 1) + " has " +
                     std::to_string(c.series[k].values.size()) + " values for " +
                     std::to_string(points) + " points");
  }
  report::ThinLineChart(&c, report::kMaxLinePoints);
  return c;
}

report::Block ReadBlock(lua_State* L, const std::string& where) {
  const std::string kind = Field(L, "kind", where);
  if (kind == "heading") return report::Heading{Field(L, "text", where)};
  if (kind == "text") return report::Paragraph{Field(L, "text", where)};
  if (kind == "link")
    return report::SectionLink{Field(L, "section", where), Field(L, "text", where)};
  if (kind == "list") {
    report::List l;
    ForList(L, "items", where,
            [&](size_t) { l.items.push_back(TopString(L, where + ": an item")); });
    return l;
  }
  if (kind == "table") return ReadTable(L, where);
  if (kind == "chart") return ReadChart(L, where);
  if (kind == "svg") {
    report::Svg svg{Field(L, "title", where), Field(L, "file", where), Field(L, "svg", where)};
    // The Markdown output writes it beside the report under this name: no folders, no "..".
    const std::string& file = svg.file_name;
    const bool named = file.size() > 4 && file.compare(file.size() - 4, 4, ".svg") == 0 &&
                       report::IsSafeId(std::string_view(file).substr(0, file.size() - 4));
    if (!named)
      throw LuaError(where + ": an SVG's file must be NAME.svg (letters, digits, - and _), got '" +
                     file + "'");
    return svg;
  }
  if (kind == "timeline") {
    lua_getfield(L, -1, "trace");
    auto* h = static_cast<TraceHandle*>(luaL_testudata(L, -1, kTraceType));
    lua_pop(L, 1);
    if (h == nullptr) throw LuaError(where + ": a timeline needs a Trace");
    return report::BuildTimelineOverview(
        *h->trace, static_cast<size_t>(IntegerField(L, "buckets", 200, 1, 10000, where)),
        static_cast<size_t>(IntegerField(L, "lanes", 48, 1, 1000, where)));
  }
  throw LuaError(where + ": unknown block kind '" + kind + "'");
}

// write_report(document, path) -> list of the files written.
int WriteReportFromLua(lua_State* L) {
  return Protect(L, [&] {
    luaL_checktype(L, 1, LUA_TTABLE);
    const std::string path(CheckString(L, 2, "report", "output path"));
    lua_settop(L, 2);
    lua_pushvalue(L, 1);
    report::Document doc;
    doc.title = Field(L, "title", "report");
    doc.subtitle = Field(L, "subtitle", "report");
    ForList(L, "sections", "report", [&](size_t s) {
      report::Section section;
      section.id = Field(L, "id", "report section " + std::to_string(s));
      if (!report::IsSafeId(section.id))
        throw LuaError("report section " + std::to_string(s) + ": its id '" + section.id +
                       "' must be letters, digits, - and _");
      section.title = Field(L, "title", "report section " + std::to_string(s));
      ForList(L, "blocks", "section '" + section.title + "'", [&](size_t b) {
        section.blocks.push_back(
            ReadBlock(L, "section '" + section.title + "', block " + std::to_string(b)));
      });
      doc.sections.push_back(std::move(section));
    });
    auto written = report::WriteReport(doc, path);
    if (!written.ok()) throw LuaError(written.error().message);
    lua_createtable(L, static_cast<int>(written.value().size()), 0);
    for (size_t k = 0; k < written.value().size(); ++k) {
      lua_pushstring(L, written.value()[k].c_str());
      lua_rawseti(L, -2, static_cast<lua_Integer>(k + 1));
    }
    return 1;
  });
}

}  // namespace

void OpenReport(lua_State* L) {
  // Stack: profsh. The report library receives profsh, the built-in templates, the writer and
  // the function that puts full file names back into messages (chunk_names.h).
  if (luaL_loadbuffer(L, kReportLibrarySource, std::strlen(kReportLibrarySource),
                      "=[profsh report library]") != LUA_OK) {
    lua_error(L);  // a build defect
  }
  lua_pushvalue(L, -2);
  lua_createtable(L, 0, static_cast<int>(kBuiltinTemplateCount));
  for (size_t k = 0; k < kBuiltinTemplateCount; ++k) {
    lua_pushstring(L, kBuiltinTemplates[k].source);
    lua_setfield(L, -2, kBuiltinTemplates[k].name);
  }
  lua_pushcfunction(L, WriteReportFromLua);
  lua_pushcfunction(L, RestoreChunkNamesFromLua);
  lua_call(L, 4, 0);
}

}  // namespace profsh::lua
