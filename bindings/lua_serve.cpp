// profsh.serve(dir, {port=6006, host="127.0.0.1", threads=8, cache_mb=N}): the profsh serve web
// UI over a LOGDIR (engine/serve). Blocks until SIGINT or SIGTERM, then returns.
#include <csignal>
#include <cstdio>

#include "bindings/lua_api.h"
#include "bindings/lua_support.h"
#include "engine/serve/serve_app.h"

namespace profsh::lua {

namespace {

std::atomic<bool> g_stop_serving{false};

extern "C" void StopServing(int) {
  g_stop_serving.store(true);
}

// SIGINT/SIGTERM end the serving loop while it runs; the previous handlers come back after.
class StopSignals {
 public:
  StopSignals() {
    struct sigaction action {};
    action.sa_handler = StopServing;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

int ModuleServe(lua_State* L) {
  return Protect(L, [&] {
    serve::ServeOptions options;
    options.logdir = luaL_checkstring(L, 1);
    Options opts(L, 2, "serve", {"port", "host", "threads", "cache_mb"});
    options.port = static_cast<int>(opts.Int("port", 6006));
    options.host = opts.String("host").value_or("127.0.0.1");
    options.threads = static_cast<int>(opts.Int("threads", 8));
    if (options.threads < 1 || options.threads > 256)
      throw LuaError("bad option 'threads' to 'serve' (1 to 256)");
    if (std::optional<double> mb = opts.Number("cache_mb")) {
      if (!(*mb >= 0 && *mb <= 1e9))
        throw LuaError("bad option 'cache_mb' to 'serve' (0 to 1e9 megabytes)");
      options.cache_bytes = static_cast<uint64_t>(*mb * 1024 * 1024);
    }
    g_stop_serving.store(false);
    StopSignals signals;
    Status status = serve::RunServer(
        options,
        [&](const std::string& url) {
          std::printf("profsh serve: %s at %s\n", options.logdir.c_str(), url.c_str());
          std::fflush(stdout);
          std::fprintf(stderr,
                       "profsh serve: keeps up to %.0f MB of traces loaded (cache_mb; the least "
                       "recently used go first)\n",
                       static_cast<double>(options.cache_bytes) / (1024 * 1024));
        },
        g_stop_serving);
    if (!status.ok()) throw LuaError("serve: " + status.message());
    return 0;
  });
}

}  // namespace

void RegisterServe(lua_State* L) {
  lua_pushcfunction(L, ModuleServe);
  lua_setfield(L, -2, "serve");
}

}  // namespace profsh::lua
