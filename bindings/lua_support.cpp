#include "bindings/lua_support.h"

#include <algorithm>
#include <cmath>

#include "engine/util/edit_distance.h"

namespace profsh::lua {

std::vector<std::string> PathListArg(
    lua_State* L, const char* function,
    Result<std::vector<std::string>> (*resolve)(const std::string& dir_or_glob)) {
  if (lua_type(L, 1) == LUA_TSTRING) {
    auto paths = resolve(lua_tostring(L, 1));
    if (!paths.ok()) throw LuaError(std::string(function) + ": " + paths.error().message);
    return std::move(paths.value());
  }
  if (!lua_istable(L, 1))
    throw LuaError("bad argument #1 to '" + std::string(function) +
                   "' (a folder, a glob pattern or a list of paths expected, got " +
                   std::string(luaL_typename(L, 1)) + ")");
  std::vector<std::string> paths;
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, 1));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, 1, i);
    if (lua_type(L, -1) != LUA_TSTRING)
      throw LuaError("bad argument #1 to '" + std::string(function) + "' (item " +
                     std::to_string(i) + " is not a path)");
    paths.emplace_back(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  return paths;
}

std::string TypeName(lua_State* L, int index) {
  if (luaL_getmetafield(L, index, "__name") == LUA_TSTRING) {
    std::string name = lua_tostring(L, -1);
    lua_pop(L, 1);
    return name;
  }
  if (lua_type(L, index) != LUA_TNIL || !lua_isnone(L, index)) {
    // luaL_getmetafield pushes nothing when the field is absent
  }
  return luaL_typename(L, index);
}

std::string_view CheckString(lua_State* L, int index, const char* function, const char* what) {
  if (lua_type(L, index) != LUA_TSTRING) {
    throw LuaError(std::string("bad argument #") + std::to_string(index) + " to '" + function +
                   "' (" + what + " expected, got " + TypeName(L, index) + ")");
  }
  size_t len;
  const char* s = lua_tolstring(L, index, &len);
  return std::string_view(s, len);
}

std::optional<std::string_view> OptString(lua_State* L, int index, const char* function,
                                          const char* what) {
  if (lua_isnoneornil(L, index)) return std::nullopt;
  return CheckString(L, index, function, what);
}

Options::Options(lua_State* L, int index, const char* function,
                 std::initializer_list<const char*> valid)
    : L_(L), index_(0), function_(function) {
  if (lua_isnoneornil(L, index)) return;
  if (lua_type(L, index) != LUA_TTABLE) {
    throw LuaError(std::string("bad argument #") + std::to_string(index) + " to '" + function +
                   "' (table of options expected, got " + TypeName(L, index) + ")");
  }
  index_ = lua_absindex(L, index);
  lua_pushnil(L);
  while (lua_next(L, index_) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) {
      lua_pop(L, 1);
      throw LuaError(std::string("bad argument to '") + function +
                     "' (option names must be strings)");
    }
    std::string key = lua_tostring(L, -1);
    bool known = std::any_of(valid.begin(), valid.end(), [&](const char* v) { return key == v; });
    if (!known) {
      lua_pop(L, 1);
      std::string list;
      for (const char* v : valid) list += (list.empty() ? "" : ", ") + std::string(v);
      const std::string best = ClosestName(key, valid);
      std::string hint = best.empty() ? "" : "; did you mean '" + best + "'?";
      throw LuaError("unknown option '" + key + "' to '" + function + "' (valid options: " + list +
                     ")" + hint);
    }
  }
}

void Options::Push(const char* key) const {
  if (index_ == 0) {
    lua_pushnil(L_);
  } else {
    // Raw, as the key check in the constructor is: a metatable's __index must not run (nor raise)
    // while the caller's C++ objects are alive.
    lua_pushstring(L_, key);
    lua_rawget(L_, index_);
  }
}

bool Options::Has(const char* key) const {
  Push(key);
  bool has = !lua_isnil(L_, -1);
  lua_pop(L_, 1);
  return has;
}

void Options::Bad(const char* key, const char* expected) const {
  std::string got = TypeName(L_, -1);
  lua_pop(L_, 1);
  throw LuaError(std::string("bad option '") + key + "' to '" + function_ + "' (" + expected +
                 " expected, got " + got + ")");
}

bool Options::Bool(const char* key, bool fallback) const {
  Push(key);
  if (lua_isnil(L_, -1)) {
    lua_pop(L_, 1);
    return fallback;
  }
  if (!lua_isboolean(L_, -1)) Bad(key, "boolean");
  bool v = lua_toboolean(L_, -1);
  lua_pop(L_, 1);
  return v;
}

int64_t Options::Int(const char* key, int64_t fallback) const {
  Push(key);
  if (lua_isnil(L_, -1)) {
    lua_pop(L_, 1);
    return fallback;
  }
  int isnum = 0;
  lua_Integer v = lua_tointegerx(L_, -1, &isnum);
  if (!isnum || lua_type(L_, -1) != LUA_TNUMBER) Bad(key, "integer");
  lua_pop(L_, 1);
  return v;
}

std::optional<int64_t> Options::IntOrNone(const char* key, std::optional<int64_t> fallback) const {
  Push(key);
  if (lua_isnil(L_, -1)) {
    lua_pop(L_, 1);
    return fallback;
  }
  if (lua_isboolean(L_, -1) && !lua_toboolean(L_, -1)) {
    lua_pop(L_, 1);
    return std::nullopt;
  }
  int isnum = 0;
  lua_Integer v = lua_tointegerx(L_, -1, &isnum);
  if (!isnum || lua_type(L_, -1) != LUA_TNUMBER) Bad(key, "integer or false");
  lua_pop(L_, 1);
  return v;
}

std::optional<std::string> Options::String(const char* key) const {
  Push(key);
  if (lua_isnil(L_, -1)) {
    lua_pop(L_, 1);
    return std::nullopt;
  }
  if (lua_type(L_, -1) != LUA_TSTRING) Bad(key, "string");
  std::string v = lua_tostring(L_, -1);
  lua_pop(L_, 1);
  return v;
}

std::optional<double> Options::Number(const char* key) const {
  Push(key);
  if (lua_isnil(L_, -1)) {
    lua_pop(L_, 1);
    return std::nullopt;
  }
  if (lua_type(L_, -1) != LUA_TNUMBER) Bad(key, "number");
  double v = lua_tonumber(L_, -1);
  lua_pop(L_, 1);
  return v;
}

void RegisterType(lua_State* L, const char* name, std::initializer_list<Method> methods,
                  lua_CFunction field_getter, std::initializer_list<const char*> fields,
                  std::initializer_list<Method> metamethods) {
  luaL_newmetatable(L, name);
  for (const Method& m : metamethods) {
    lua_pushcfunction(L, m.function);
    lua_setfield(L, -2, m.name);
  }
  lua_newtable(L);  // methods
  for (const Method& m : methods) {
    lua_pushcfunction(L, m.function);
    lua_setfield(L, -2, m.name);
  }
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "__methods");
  // __index: methods first, then the field getter.
  if (field_getter != nullptr) {
    lua_pushcfunction(L, field_getter);
    lua_pushcclosure(
        L,
        [](lua_State* L) -> int {
          lua_pushvalue(L, 2);
          if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
          lua_pop(L, 1);
          lua_pushvalue(L, lua_upvalueindex(2));
          lua_pushvalue(L, 1);
          lua_pushvalue(L, 2);
          lua_call(L, 2, 1);
          return 1;
        },
        2);
    lua_setfield(L, -2, "__index");
  } else {
    lua_setfield(L, -2, "__index");
  }
  lua_newtable(L);
  int i = 1;
  for (const char* f : fields) {
    lua_pushstring(L, f);
    lua_rawseti(L, -2, i++);
  }
  lua_setfield(L, -2, "__fields");
  lua_pop(L, 1);
}

}  // namespace profsh::lua
