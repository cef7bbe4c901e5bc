#include "bindings/chunk_names.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include <cstring>

namespace profsh::lua {

namespace {

// Registry table: shortened name -> full name, for names Lua shortens.
constexpr char kNamesKey[] = "profsh.chunk_names";

void PushNames(lua_State* L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, kNamesKey) == LUA_TTABLE) return;
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kNamesKey);
}

// The wrapped function (upvalue 1) called with every argument, after recording the file name
// that argument `path_arg` holds.
int CallRecordingPath(lua_State* L, int path_arg) {
  if (lua_type(L, path_arg) == LUA_TSTRING) {
    std::string chunkname = "@";
    chunkname += lua_tostring(L, path_arg);
    RecordChunkName(L, chunkname.c_str());
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

int LoadRecording(lua_State* L) {
  // load(chunk, chunkname): only a chunkname naming a file ("@path") is shortened with "...".
  if (lua_type(L, 2) == LUA_TSTRING) RecordChunkName(L, lua_tostring(L, 2));
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}
// loadfile(path, ...) and dofile(path).
int FileLoaderRecording(lua_State* L) {
  return CallRecordingPath(L, 1);
}

// package.searchers[2] returns the loader and the file it was loaded from.
int SearcherRecording(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  if (lua_gettop(L) >= 2 && lua_type(L, 1) == LUA_TFUNCTION && lua_type(L, 2) == LUA_TSTRING) {
    std::string chunkname = "@";
    chunkname += lua_tostring(L, 2);
    RecordChunkName(L, chunkname.c_str());
  }
  return lua_gettop(L);
}

void WrapGlobal(lua_State* L, const char* name, lua_CFunction wrapper) {
  lua_getglobal(L, name);
  if (lua_type(L, -1) != LUA_TFUNCTION) {
    lua_pop(L, 1);
    return;
  }
  lua_pushcclosure(L, wrapper, 1);
  lua_setglobal(L, name);
}

}  // namespace

void OpenChunkNames(lua_State* L) {
  WrapGlobal(L, "load", LoadRecording);
  WrapGlobal(L, "loadfile", FileLoaderRecording);
  WrapGlobal(L, "dofile", FileLoaderRecording);
  const int top = lua_gettop(L);
  lua_getglobal(L, "package");
  if (lua_type(L, -1) == LUA_TTABLE && lua_getfield(L, -1, "searchers") == LUA_TTABLE &&
      lua_rawgeti(L, -1, 2) == LUA_TFUNCTION) {
    lua_pushcclosure(L, SearcherRecording, 1);
    lua_rawseti(L, -2, 2);
  }
  lua_settop(L, top);
}

void RecordChunkName(lua_State* L, const char* chunkname) {
  if (chunkname[0] != '@') return;
  // Lua's own shortening, asked of Lua: an empty chunk of that name and its short_src.
  if (luaL_loadbuffer(L, "", 0, chunkname) != LUA_OK) {
    lua_pop(L, 1);
    return;
  }
  lua_Debug ar;
  lua_getinfo(L, ">S", &ar);                                  // pops the chunk
  if (std::strcmp(ar.short_src, chunkname + 1) == 0) return;  // not shortened
  PushNames(L);
  lua_pushstring(L, chunkname + 1);
  lua_setfield(L, -2, ar.short_src);
  lua_pop(L, 1);
}

std::string RestoreChunkNames(lua_State* L, const std::string& message) {
  if (message.find("...") == std::string::npos) return message;
  PushNames(L);
  std::string out;
  size_t copied = 0;
  for (size_t at = message.find("..."); at != std::string::npos; at = message.find("...", at)) {
    // The longest recorded shortened name that starts here.
    size_t best_length = 0;
    std::string best;
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      size_t length;
      const char* shortened = lua_tolstring(L, -2, &length);
      if (length > best_length && message.compare(at, length, shortened, length) == 0) {
        best_length = length;
        best = lua_tostring(L, -1);
      }
      lua_pop(L, 1);
    }
    if (best_length == 0) {
      at += 3;
      continue;
    }
    out.append(message, copied, at - copied);
    out += best;
    at += best_length;
    copied = at;
  }
  lua_pop(L, 1);
  out.append(message, copied, std::string::npos);
  return out;
}

int RestoreChunkNamesFromLua(lua_State* L) {
  if (lua_type(L, 1) != LUA_TSTRING) {
    lua_settop(L, 1);
    return 1;
  }
  const std::string restored = RestoreChunkNames(L, lua_tostring(L, 1));
  lua_pushlstring(L, restored.data(), restored.size());
  return 1;
}

}  // namespace profsh::lua
