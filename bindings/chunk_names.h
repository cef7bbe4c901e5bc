// Full file names in Lua's messages. Lua shortens a chunk's name to LUA_IDSIZE (60) characters
// in error positions and tracebacks ("...ort/templates/broken_call.lua:4: ..."), which leaves a
// template, recipe or dofile'd file under a deep folder unnamed. Chunks loaded from files record
// their full name here (RunFile, and the wrapped load, loadfile, dofile and require searcher);
// a message on its way to the user gets each shortened name put back in full.
#pragma once

#include <string>

struct lua_State;

namespace profsh::lua {

// Wraps the global load, loadfile and dofile and package's Lua file searcher so that the files
// they load are recorded.
void OpenChunkNames(lua_State* L);

// Records `chunkname` ("@path"; other names are never shortened the same way).
void RecordChunkName(lua_State* L, const char* chunkname);

// `message` with each recorded file's shortened name replaced by its full name.
std::string RestoreChunkNames(lua_State* L, const std::string& message);

// RestoreChunkNames for Lua: restore(message) -> message (other values are returned as they are).
int RestoreChunkNamesFromLua(lua_State* L);

}  // namespace profsh::lua
