#include "bindings/lua_api.h"
#include "bindings/lua_schedule.h"
#include "bindings/lua_support.h"
#include "engine/recording/launcher.h"

#include <unistd.h>

#include <cstring>
#include <string>

#ifndef PROFSH_VERSION
#define PROFSH_VERSION "0.0.0"
#endif

namespace profsh::lua {

namespace {

int Require(lua_State* L) {
  lua_getglobal(L, "profsh");
  return 1;
}

}  // namespace

void OpenProfsh(lua_State* L) {
  lua_newtable(L);
  lua_pushstring(L, PROFSH_VERSION);
  lua_setfield(L, -2, "version");
  // Where the profsh executable is: the collector and the sample workload live beside it.
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir = dir.substr(0, dir.find_last_of('/'));
    lua_pushstring(L, dir.c_str());
    lua_setfield(L, -2, "executable_dir");
  }
  // Where the collector, the sample workload and the PyTorch hook are: beside the executable in
  // a build tree, ../lib/profsh in an installed or unpacked bundle.
  if (auto collector = FindCollector(); collector.ok()) {
    const std::string& path = collector.value();
    lua_pushstring(L, path.substr(0, path.find_last_of('/')).c_str());
    lua_setfield(L, -2, "library_dir");
  }
  RegisterTrace(L);
  RegisterRows(L);
  RegisterAverages(L);
  RegisterFlamegraph(L);
  RegisterProfile(L);
  RegisterSchedule(L);
  RegisterDiff(L);
  RegisterServe(L);

  // The prelude receives the table and finishes the module in Lua (help, printing helpers).
  if (luaL_loadbuffer(L, kPreludeSource, std::strlen(kPreludeSource), "=[profsh prelude]") !=
      LUA_OK) {
    lua_error(L);  // a broken prelude is a build defect; fail loudly at start-up
  }
  lua_pushvalue(L, -2);
  lua_call(L, 1, 0);
  OpenReport(L);
  lua_setglobal(L, "profsh");

  // require "profsh" returns the same table.
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, Require);
  lua_setfield(L, -2, "profsh");
  lua_pop(L, 2);
}

}  // namespace profsh::lua
