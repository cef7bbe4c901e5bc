#include "engine/serve/serve_app.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <filesystem>

#include <thread>

#include "engine/report/escape.h"
#include "engine/serve/distributed_view.h"
#include "engine/serve/http_server.h"
#include "engine/serve/log_dir.h"
#include "engine/serve/pages.h"

namespace profsh::serve {

using report::EscapeHtml;
using report::JsonString;
using report::PercentEncodePath;

namespace {

HttpResponse Html(std::string body) {
  HttpResponse r;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::move(body);
  return r;
}

HttpResponse Json(std::string body) {
  HttpResponse r;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

// An integer query parameter; false when present but not an integer.
bool IntParam(const HttpRequest& request, const char* name, int64_t* out, bool* present) {
  auto it = request.query.find(name);
  *present = it != request.query.end();
  if (!*present) return true;
  const std::string& text = it->second;
  if (text.empty() || text.size() > 19) return false;
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0') return false;
  *out = value;
  return true;
}

}  // namespace

HttpResponse ServeApp::Handle(const HttpRequest& request) {
  if (request.path == "/") return Index();
  if (request.path == "/api/runs") return RunsJson();
  if (request.path == "/trace") return TracePage(request);
  if (request.path == "/timeline") return TimelinePage(request);
  if (request.path == "/api/timeline") return TimelineData(request);
  if (request.path == "/download") return Download(request);
  if (request.path == "/distributed") return Distributed(request);
  if (request.path == "/api/cache") return CacheJson();
  return ErrorResponse(404, "no page " + request.path);
}

HttpResponse ServeApp::Index() {
  return Html(IndexHtml(root_, ScanLogDir(root_, naming_)));
}

HttpResponse ServeApp::RunsJson() {
  std::string out = "{\"runs\":[";
  bool first_run = true;
  for (const Run& run : ScanLogDir(root_, naming_)) {
    out +=
        std::string(first_run ? "" : ",") + "{\"name\":" + JsonString(run.name) + ",\"traces\":[";
    first_run = false;
    for (size_t i = 0; i < run.traces.size(); ++i) {
      const TraceFile& t = run.traces[i];
      out += std::string(i ? "," : "") + "{\"path\":" + JsonString(t.path) +
             ",\"worker\":" + JsonString(t.worker) + ",\"span\":" + JsonString(t.span) +
             ",\"bytes\":" + std::to_string(t.bytes) + "}";
    }
    out += "]}";
  }
  return Json(out + "]}");
}

ServeApp::OpenedTrace ServeApp::Open(const HttpRequest& request) {
  OpenedTrace opened;
  auto it = request.query.find("path");
  if (it == request.query.end()) {
    opened.error = ErrorResponse(400, "?path= is missing");
    return opened;
  }
  opened.relative = it->second;
  Resolved resolved = ResolveUnder(root_, opened.relative, naming_);
  if (resolved.status != 200) {
    opened.error = ErrorResponse(resolved.status, resolved.why);
    return opened;
  }
  auto loaded = cache_.Get(resolved.path);
  if (!loaded.ok()) {
    opened.error = ErrorResponse(422, loaded.error().message);
    return opened;
  }
  opened.loaded = loaded.value();
  return opened;
}

HttpResponse ServeApp::TracePage(const HttpRequest& request) {
  OpenedTrace t = Open(request);
  if (!t.loaded) return t.error;
  std::string run =
      naming_.RunName(std::filesystem::path(t.relative).parent_path().generic_string());
  HttpResponse page = Html(TraceHtml(t.relative, run, *t.loaded));
  cache_.Trim();  // the views just made count from now on
  return page;
}

HttpResponse ServeApp::TimelinePage(const HttpRequest& request) {
  OpenedTrace t = Open(request);
  return t.loaded ? Html(TimelineHtml(t.relative, *t.loaded)) : t.error;
}

HttpResponse ServeApp::TimelineData(const HttpRequest& request) {
  OpenedTrace t = Open(request);
  if (!t.loaded) return t.error;
  const std::shared_ptr<const LoadedTrace>& loaded = t.loaded;
  TimelineQuery q;
  q.t0 = loaded->timeline.begin_ns;
  q.t1 = loaded->timeline.end_ns;
  int64_t width = q.width_px;
  bool has_t0, has_t1, has_width;
  if (!IntParam(request, "t0", &q.t0, &has_t0) || !IntParam(request, "t1", &q.t1, &has_t1))
    return ErrorResponse(400, "t0 and t1 must be integers (ns)");
  if (!IntParam(request, "width", &width, &has_width) || width < 1 || width > 20000)
    return ErrorResponse(400, "width must be an integer from 1 to 20000 (pixels)");
  if (q.t1 <= q.t0) q.t1 = q.t0 + 1;
  q.width_px = static_cast<int>(width);
  return Json(TimelineJson(*loaded->trace, loaded->timeline, q));
}

HttpResponse ServeApp::Download(const HttpRequest& request) {
  auto it = request.query.find("path");
  if (it == request.query.end()) return ErrorResponse(400, "?path= is missing");
  Resolved resolved = ResolveUnder(root_, it->second, naming_);
  if (resolved.status != 200) return ErrorResponse(resolved.status, resolved.why);
  HttpResponse r;
  r.content_type = "application/octet-stream";
  r.file_path = resolved.path;
  r.download_name = std::filesystem::path(resolved.path).filename().string();
  for (char& c : r.download_name)
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) c = '_';
  return r;
}

HttpResponse ServeApp::Distributed(const HttpRequest& request) {
  auto run_param = request.query.find("run");
  if (run_param == request.query.end()) return ErrorResponse(400, "?run= is missing");
  std::vector<Run> runs = ScanLogDir(root_, naming_);
  auto run = std::find_if(runs.begin(), runs.end(),
                          [&](const Run& r) { return r.name == run_param->second; });
  if (run == runs.end()) return ErrorResponse(404, "no run named " + run_param->second);
  std::vector<std::string> spans = SpansOf(*run);
  auto span_param = request.query.find("span");
  std::string span = span_param == request.query.end() ? spans.back() : span_param->second;
  if (std::find(spans.begin(), spans.end(), span) == spans.end())
    return ErrorResponse(404, "run " + run->name + " has no span " + span);
  std::vector<RunWorker> workers;
  for (const TraceFile& file : run->traces) {
    if (file.span != span) continue;
    Resolved resolved = ResolveUnder(root_, file.path, naming_);
    if (resolved.status != 200)
      return ErrorResponse(resolved.status, file.path + ": " + resolved.why);
    auto loaded = cache_.Get(resolved.path);
    if (!loaded.ok()) return ErrorResponse(422, loaded.error().message);
    workers.push_back(RunWorker{&file, loaded.value()});
  }
  HttpResponse page = Html(DistributedHtml(*run, span, workers, RunDistributedSummary(workers)));
  cache_.Trim();
  return page;
}

HttpResponse ServeApp::CacheJson() {
  TraceCache::Usage usage = cache_.usage();
  std::string out = "{\"max_bytes\":" + std::to_string(usage.max_bytes) +
                    ",\"bytes\":" + std::to_string(usage.bytes) +
                    ",\"loads\":" + std::to_string(usage.loads) +
                    ",\"evictions\":" + std::to_string(usage.evictions) + ",\"kept\":[";
  for (size_t i = 0; i < usage.kept.size(); ++i) {
    std::string path = usage.kept[i].path;
    if (path.compare(0, root_.size() + 1, root_ + "/") == 0) path.erase(0, root_.size() + 1);
    out += std::string(i ? "," : "") + "{\"path\":" + JsonString(path) +
           ",\"bytes\":" + std::to_string(usage.kept[i].bytes) + "}";
  }
  return Json(out + "]}");
}

Result<std::unique_ptr<BackgroundServer>> BackgroundServer::Start(const ServeOptions& options) {
  char real[PATH_MAX];
  if (realpath(options.logdir.c_str(), real) == nullptr || !std::filesystem::is_directory(real))
    return Error{options.logdir + ": not a folder"};
  std::unique_ptr<BackgroundServer> s(new BackgroundServer());
  s->app_ = std::make_unique<ServeApp>(real, options.naming, options.cache_bytes);
  ServeApp* app = s->app_.get();
  s->server_ = std::make_unique<HttpServer>([app](const HttpRequest& r) { return app->Handle(r); },
                                            options.threads);
  Status listening = s->server_->Listen(options.host, options.port);
  if (!listening.ok()) return Error{listening.message()};
  s->url_ = "http://" + options.host + ":" + std::to_string(s->server_->port()) + "/";
  // The serving threads take no process signal: those stay the caller's (profsh run passes
  // them on to its job).
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  s->thread_ = std::thread([server = s->server_.get(), stop = &s->stop_] { server->Serve(*stop); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return s;
}

BackgroundServer::~BackgroundServer() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

Status RunServer(const ServeOptions& options,
                 const std::function<void(const std::string&)>& on_listening,
                 const std::atomic<bool>& stop) {
  auto server = BackgroundServer::Start(options);
  if (!server.ok()) return Status(server.error());
  on_listening(server.value()->url());
  while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return Status::Ok();
}

}  // namespace profsh::serve
