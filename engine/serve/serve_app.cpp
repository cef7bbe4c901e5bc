#include "engine/serve/serve_app.h"

#include <climits>
#include <cstdlib>
#include <filesystem>

#include "engine/report/escape.h"
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
  return ErrorResponse(404, "no page " + request.path);
}

HttpResponse ServeApp::Index() {
  return Html(IndexHtml(root_, ScanLogDir(root_)));
}

HttpResponse ServeApp::RunsJson() {
  std::string out = "{\"runs\":[";
  bool first_run = true;
  for (const Run& run : ScanLogDir(root_)) {
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
  Resolved resolved = ResolveUnder(root_, opened.relative);
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
  return t.loaded ? Html(TraceHtml(t.relative, *t.loaded)) : t.error;
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
  Resolved resolved = ResolveUnder(root_, it->second);
  if (resolved.status != 200) return ErrorResponse(resolved.status, resolved.why);
  HttpResponse r;
  r.content_type = "application/octet-stream";
  r.file_path = resolved.path;
  r.download_name = std::filesystem::path(resolved.path).filename().string();
  for (char& c : r.download_name)
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) c = '_';
  return r;
}

Status RunServer(const ServeOptions& options,
                 const std::function<void(const std::string&)>& on_listening,
                 const std::atomic<bool>& stop) {
  char real[PATH_MAX];
  if (realpath(options.logdir.c_str(), real) == nullptr || !std::filesystem::is_directory(real))
    return Error{options.logdir + ": not a folder"};
  ServeApp app(real);
  HttpServer server([&app](const HttpRequest& r) { return app.Handle(r); }, options.threads);
  Status listening = server.Listen(options.host, options.port);
  if (!listening.ok()) return listening;
  on_listening("http://" + options.host + ":" + std::to_string(server.port()) + "/");
  server.Serve(stop);
  return Status::Ok();
}

}  // namespace profsh::serve
