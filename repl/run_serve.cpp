#include "repl/run_serve.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "engine/recording/signal_forwarding.h"

namespace profsh::repl {

namespace {

// The folder and the BASE of BASE.PID.N.EXT, as WindowPath (run_command.cpp) names windows.
void SplitOutput(const std::string& output, std::string* folder, std::string* base) {
  std::filesystem::path path(output);
  *folder = path.has_parent_path() ? path.parent_path().string() : ".";
  *base = path.filename().string();
  for (const char* ext : {".json.gz", ".json", ".profsh"}) {
    const std::string e(ext);
    if (base->size() > e.size() && base->compare(base->size() - e.size(), e.size(), e) == 0) {
      base->erase(base->size() - e.size());
      break;
    }
  }
}

}  // namespace

Result<std::unique_ptr<RunServing>> RunServing::Start(const RunServeOptions& options,
                                                      const std::string& output) {
  serve::ServeOptions serve_options;
  std::string base;
  SplitOutput(output, &serve_options.logdir, &base);
  serve_options.naming = serve::TraceNaming::RunWindows(base);
  // Taken before the job starts: what is there now is an earlier run's.
  const size_t earlier = serve_options.naming.LeaveOutPresentWindows(serve_options.logdir);
  serve_options.host = options.host;
  serve_options.port = options.port;
  serve_options.cache_bytes = options.cache_bytes;
  auto server = serve::BackgroundServer::Start(serve_options);
  if (!server.ok()) return server.error();
  std::unique_ptr<RunServing> serving(new RunServing());
  serving->options_ = options;
  serving->server_ = std::move(server.value());
  std::fprintf(stderr, "profsh run: serving the windows of %s.* at %s (%s)\n",
               (std::filesystem::path(serve_options.logdir) / base).string().c_str(),
               serving->server_->url().c_str(),
               options.keep_serving ? "until Ctrl-C, the job's end included"
                                    : "until the job ends; --keep-serving goes on after it");
  if (earlier > 0)
    std::fprintf(stderr,
                 "profsh run: %zu window%s of an earlier run with the same -o left out (written "
                 "before this run)\n",
                 earlier, earlier == 1 ? "" : "s");
  return serving;
}

void RunServing::JobEnded() {
  if (!options_.keep_serving) return;
  const int signals_before = SignalForwarding::Received();
  std::fprintf(stderr, "profsh run: the job ended; still serving at %s (Ctrl-C stops)\n",
               server_->url().c_str());
  while (SignalForwarding::Received() == signals_before)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

}  // namespace profsh::repl
