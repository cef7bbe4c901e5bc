// `profsh run --serve`: the windows a long job saves (BASE.PID.N.EXT beside -o) served as web
// pages (engine/serve) while the job runs, on loopback unless --host says otherwise; the windows
// an earlier run with the same -o left there are not listed. Serving stops when the job ends, so
// that `profsh run` still ends with its job; --keep-serving goes on until Ctrl-C or SIGTERM.
#pragma once

#include <memory>
#include <string>

#include "engine/serve/serve_app.h"
#include "engine/util/result.h"

namespace profsh::repl {

struct RunServeOptions {
  bool enabled = false;
  std::string host = "127.0.0.1";
  int port = 6006;  // 0: a free one
  bool keep_serving = false;
  uint64_t cache_bytes = serve::DefaultCacheBytes();
};

class RunServing {
 public:
  // Listens before the job starts (an error when the address cannot be had) and says where.
  static Result<std::unique_ptr<RunServing>> Start(const RunServeOptions& options,
                                                   const std::string& output);
  // Once the job ended: returns at once, or with --keep-serving when a signal comes (profsh run's
  // SignalForwarding counts it). Serving stops when this object is destroyed.
  void JobEnded();

 private:
  RunServing() = default;
  RunServeOptions options_;
  std::unique_ptr<serve::BackgroundServer> server_;
};

}  // namespace profsh::repl
