#include "repl/serve_command.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bindings/interpreter.h"
#include "repl/command_line.h"

namespace profsh::repl {

namespace {

constexpr char kUsage[] =
    "usage: profsh serve LOGDIR [--port 6006] [--host 127.0.0.1] [--threads 8] [--cache-mb N]\n"
    "\n"
    "Serves the traces under LOGDIR (the folders tensorboard_trace_handler writes: a run per\n"
    "folder, {worker}.{span}.pt.trace.json[.gz] per trace) as web pages: the runs, each trace's\n"
    "views, a timeline that asks for the range in view, the trace itself to download. New traces\n"
    "appear as a job writes them. Listens on loopback unless --host says otherwise; --port 0\n"
    "takes a free port (printed). Ctrl-C stops it.\n"
    "\n"
    "--cache-mb N bounds the memory of the traces kept loaded between requests (default: half\n"
    "the machine's memory); past it, those used least recently are dropped, and loaded again\n"
    "when asked for. The trace the latest request uses is kept whatever its size.\n";

bool ParsePort(const std::string& text, int max, int* out) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *out = std::stoi(text);
  return *out <= max;
}

}  // namespace

int RunServeCommand(int argc, char** argv) {
  std::string logdir, host = "127.0.0.1";
  int port = 6006, threads = 8;
  std::string cache_mb;
  CommandLine cl("profsh serve", argc, argv,
                 {"--help", "--port", "--host", "--threads", "--cache-mb"});
  while (cl.Next()) {
    const std::string& a = cl.arg();
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--port") {
      if (!ParsePort(cl.Value("a port (0 to 65535)"), 65535, &port))
        cl.Fail("--port takes a number from 0 to 65535");
    } else if (a == "--host") {
      host = cl.Value("a numeric IPv4 address");
    } else if (a == "--threads") {
      if (!ParsePort(cl.Value("a thread count"), 256, &threads) || threads < 1)
        cl.Fail("--threads takes a number from 1 to 256");
    } else if (a == "--cache-mb") {
      cache_mb = cl.Value("a number of megabytes");
      char* end = nullptr;
      double mb = std::strtod(cache_mb.c_str(), &end);
      if (cache_mb.empty() || *end != '\0' || !(mb >= 0 && mb <= 1e9))
        cl.Fail("--cache-mb takes a number of megabytes from 0 to 1e9");
    } else if (cl.IsOption()) {
      cl.Unknown();
    } else if (logdir.empty()) {
      logdir = a;
    } else {
      cl.Fail("one LOGDIR only");
    }
  }
  if (logdir.empty()) cl.Fail("no LOGDIR given");

  std::string error;
  auto session = lua::Interpreter::Create(&error);
  if (!session) return CommandFailed("serve", error);
  // The values reach Lua as arguments, never as code.
  session->SetArgs({"profsh"}, "serve",
                   {logdir, host, std::to_string(port), std::to_string(threads), cache_mb});
  const char* chunk = R"lua(
local ok, message = pcall(profsh.serve, arg[1], {host = arg[2], port = tonumber(arg[3]),
                                                 threads = tonumber(arg[4]),
                                                 cache_mb = tonumber(arg[5])})
if not ok then
  local text = "profsh " .. tostring(message)
  error(setmetatable({}, {__tostring = function() return text end}))
end
)lua";
  return session->RunString(chunk, "=profsh serve") == 0 ? 0 : 1;
}

}  // namespace profsh::repl
