// profsh serve: the pages and JSON over a LOGDIR, answered per request from traces the engine
// keeps loaded (trace_cache.h). Routes:
//   /                       runs -> workers -> spans (rescanned on every request)
//   /api/runs               the same as JSON
//   /trace?path=REL         one trace's page: its facts and views
//   /timeline?path=REL      the timeline page (canvas; asks /api/timeline for what it shows)
//   /api/timeline?path=REL&t0=NS&t1=NS&width=PX   slices and summary blocks (timeline_lod.h)
//   /download?path=REL      the trace file itself, for Perfetto
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "engine/serve/http_message.h"
#include "engine/serve/trace_cache.h"
#include "engine/util/result.h"

namespace profsh::serve {

struct ServeOptions {
  std::string logdir;
  std::string host = "127.0.0.1";
  int port = 6006;  // 0: a free port
  int threads = 8;
};

class ServeApp {
 public:
  explicit ServeApp(std::string canonical_root) : root_(std::move(canonical_root)) {}
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

  std::string root_;
  TraceCache cache_;
};

// Listens, calls on_listening(url) once the port is bound, then serves until *stop is true.
Status RunServer(const ServeOptions& options,
                 const std::function<void(const std::string&)>& on_listening,
                 const std::atomic<bool>& stop);

}  // namespace profsh::serve
