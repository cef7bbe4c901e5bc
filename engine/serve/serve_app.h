// profsh serve: the pages and JSON over a LOGDIR, answered per request from traces the engine
// keeps loaded (trace_cache.h). Routes:
//   /                       runs -> workers -> spans (rescanned on every request)
//   /api/runs               the same as JSON
//   /trace?path=REL         one trace's page: its facts and views
//   /timeline?path=REL      the timeline page (canvas; asks /api/timeline for what it shows)
//   /api/timeline?path=REL&t0=NS&t1=NS&width=PX   slices and summary blocks (timeline_lod.h)
//   /download?path=REL      the trace file itself, for Perfetto
//   /distributed?run=NAME[&span=S]   a run's distributed view (the latest span by default)
//   /api/cache              the traces kept loaded, their memory and the bound (JSON)
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "engine/serve/http_message.h"
#include "engine/serve/log_dir.h"
#include "engine/serve/trace_cache.h"
#include "engine/util/result.h"

namespace profsh::serve {

struct ServeOptions {
  std::string logdir;
  std::string host = "127.0.0.1";
  int port = 6006;  // 0: a free port
  int threads = 8;
  uint64_t cache_bytes = DefaultCacheBytes();  // what the loaded traces may keep
  TraceNaming naming = TraceNaming::TensorBoard();
};

class ServeApp {
 public:
  ServeApp(std::string canonical_root, TraceNaming naming, uint64_t cache_bytes)
      : root_(std::move(canonical_root)), naming_(std::move(naming)), cache_(cache_bytes) {}
  HttpResponse Handle(const HttpRequest& request);

 private:
  // The trace ?path= names, loaded; or the error response to send instead.
  struct OpenedTrace {
    std::string relative;
    std::shared_ptr<const LoadedTrace> loaded;
    HttpResponse error;
  };
  OpenedTrace Open(const HttpRequest& request);
  HttpResponse Index();
  HttpResponse RunsJson();
  HttpResponse TracePage(const HttpRequest& request);
  HttpResponse TimelinePage(const HttpRequest& request);
  HttpResponse TimelineData(const HttpRequest& request);
  HttpResponse Download(const HttpRequest& request);
  HttpResponse Distributed(const HttpRequest& request);
  HttpResponse CacheJson();

  std::string root_;
  TraceNaming naming_;
  TraceCache cache_;
};

class HttpServer;

// A server answering on threads of its own until destroyed: profsh run --serve, which serves
// while its job runs.
class BackgroundServer {
 public:
  // Listens on options.host:port (an error, and nothing started, when it cannot).
  static Result<std::unique_ptr<BackgroundServer>> Start(const ServeOptions& options);
  // Stops answering; requests in progress finish first.
  ~BackgroundServer();
  const std::string& url() const { return url_; }

 private:
  BackgroundServer() = default;
  std::unique_ptr<ServeApp> app_;
  std::unique_ptr<HttpServer> server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::string url_;
};

// Listens, calls on_listening(url) once the port is bound, then serves until *stop is true.
Status RunServer(const ServeOptions& options,
                 const std::function<void(const std::string&)>& on_listening,
                 const std::atomic<bool>& stop);

}  // namespace profsh::serve
