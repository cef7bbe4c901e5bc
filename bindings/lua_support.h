// The boundary between C++ and Lua. Lua reports errors with longjmp, which would skip C++
// destructors, so binding functions never raise Lua errors directly: their bodies run inside
// Protect(), throw LuaError for bad arguments or failed operations, and Protect() turns the
// exception into a Lua error only after every C++ object of the call is gone.
#pragma once

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include <initializer_list>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/util/result.h"

namespace profsh::lua {

struct LuaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs `body` (which returns the number of results it pushed) and converts exceptions to Lua
// errors prefixed with the caller's position ("script.lua:12: ...").
template <typename Body>
int Protect(lua_State* L, Body&& body) {
  int results = 0;
  bool failed = false;
  {
    std::string message;
    try {
      results = body();
    } catch (const LuaError& e) {
      message = e.what();
      failed = true;
    } catch (const std::bad_alloc&) {
      message = "out of memory";
      failed = true;
    } catch (const std::exception& e) {
      message = std::string("internal error: ") + e.what();
      failed = true;
    }
    if (failed) {
      luaL_where(L, 1);
      lua_pushlstring(L, message.data(), message.size());
      lua_concat(L, 2);
    }
  }
  if (failed) return lua_error(L);
  return results;
}

std::string TypeName(lua_State* L, int index);
std::string_view CheckString(lua_State* L, int index, const char* function, const char* what);
std::optional<std::string_view> OptString(lua_State* L, int index, const char* function,
                                          const char* what);

// Argument 1 of a loader of many files (load_ranks, load_summaries): a folder or glob pattern,
// which `resolve` lists, or a list of paths.
std::vector<std::string> PathListArg(
    lua_State* L, const char* function,
    Result<std::vector<std::string>> (*resolve)(const std::string& dir_or_glob));

// Reads an options table (`fn{key=value, ...}`), rejecting unknown keys and wrong types.
class Options {
 public:
  Options(lua_State* L, int index, const char* function, std::initializer_list<const char*> valid);

  bool Bool(const char* key, bool fallback) const;
  int64_t Int(const char* key, int64_t fallback) const;
  // nil gives the fallback; false gives nullopt (torch's None).
  std::optional<int64_t> IntOrNone(const char* key, std::optional<int64_t> fallback) const;
  std::optional<std::string> String(const char* key) const;
  std::optional<double> Number(const char* key) const;
  bool Has(const char* key) const;
  // Pushes the raw value (or nil) onto the stack.
  void Push(const char* key) const;
  lua_State* state() const { return L_; }

 private:
  [[noreturn]] void Bad(const char* key, const char* expected) const;
  lua_State* L_;
  int index_;  // 0 when no table was given
  const char* function_;
};

// Userdata holding a C++ object of type T, destroyed by __gc.
template <typename T>
T* NewUserdata(lua_State* L, const char* metatable, T&& value) {
  void* mem = lua_newuserdatauv(L, sizeof(T), 0);
  T* object = new (mem) T(std::forward<T>(value));
  luaL_setmetatable(L, metatable);
  return object;
}

template <typename T>
int GcUserdata(lua_State* L) {
  static_cast<T*>(lua_touserdata(L, 1))->~T();
  return 0;
}

template <typename T>
T* CheckUserdata(lua_State* L, int index, const char* metatable, const char* function) {
  void* p = luaL_testudata(L, index, metatable);
  if (p == nullptr) {
    throw LuaError(std::string("bad argument #") + std::to_string(index) + " to '" + function +
                   "' (" + metatable + " expected, got " + TypeName(L, index) + ")");
  }
  return static_cast<T*>(p);
}

// Registers a userdata type: methods, a field getter for everything else, and a list of field
// names under __fields for tab completion.
struct Method {
  const char* name;
  lua_CFunction function;
};
void RegisterType(lua_State* L, const char* name, std::initializer_list<Method> methods,
                  lua_CFunction field_getter, std::initializer_list<const char*> fields,
                  std::initializer_list<Method> metamethods);

}  // namespace profsh::lua
