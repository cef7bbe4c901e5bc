#include "engine/serve/pages.h"

#include <cstdio>

#include "engine/report/escape.h"
#include "engine/serve/distributed_view.h"

namespace profsh::serve {

using report::EscapeHtml;
using report::JsonString;
using report::PercentEncodePath;

namespace {

constexpr char kStyle[] = R"(<style>
body{font:14px system-ui,sans-serif;margin:0;color:#222}
header{background:#1f2d3d;color:#fff;padding:8px 16px}header a{color:#fff}
main{padding:12px 16px}table{border-collapse:collapse}td,th{padding:3px 10px;text-align:left;
border-bottom:1px solid #ddd}th{background:#f3f5f8}pre{font-size:12px;overflow:auto}
.fact{display:inline-block;margin:4px 18px 4px 0;padding:8px 12px;background:#eef3fb;border-radius:4px}
section.view td{font-size:12px}.note{color:#666}
#timeline{display:block;width:100%;border-top:1px solid #ccc}</style>)";

}  // namespace

std::string PageHead(const std::string& title) {
  return "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + EscapeHtml(title) +
         " - profsh serve</title>" + kStyle +
         "</head><body><header><a href=\"/\">profsh serve</a> · " + EscapeHtml(title) +
         "</header><main>";
}

std::string DistributedLink(const std::string& run, const std::string& span) {
  std::string link = "/distributed?run=" + PercentEncodePath(run);
  if (!span.empty()) link += "&span=" + PercentEncodePath(span);
  return link;
}

namespace {

std::string Link(const std::string& route, const std::string& relative) {
  return route + "?path=" + PercentEncodePath(relative);
}

std::string Bytes(int64_t bytes) {
  char text[32];
  if (bytes >= (1 << 20))
    std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / (1 << 20));
  else
    std::snprintf(text, sizeof text, "%.1f kB", static_cast<double>(bytes) / 1024);
  return text;
}

std::string Fact(const std::string& name, const std::string& value) {
  return "<span class=\"fact\">" + EscapeHtml(name) + ": <b>" + EscapeHtml(value) + "</b></span>";
}

// A job writes traces while the index is open: it reloads when the list of traces changed.
constexpr char kIndexScript[] = R"JS(
(function () {
  var seen = null;
  function poll() {
    fetch("/api/runs").then(function (r) { return r.text(); }).then(function (t) {
      var names = JSON.stringify(JSON.parse(t).runs.map(function (r) {
        return r.traces.map(function (x) { return x.path; }); }));
      if (seen !== null && names !== seen) location.reload();
      seen = names;
    }).catch(function () {});
  }
  poll(); setInterval(poll, 5000);
})();
)JS";

}  // namespace

std::string IndexHtml(const std::string& root, const std::vector<Run>& runs) {
  std::string html = PageHead(root);
  if (runs.empty())
    html +=
        "<p id=\"empty\">No traces yet (*.pt.trace.json[.gz]); this page lists them as they "
        "are written.</p>";
  for (const Run& run : runs) {
    size_t workers = 0;
    std::string latest = SpansOf(run).back();
    for (const TraceFile& t : run.traces) workers += t.span == latest;
    html += "<h2 class=\"run\">" + EscapeHtml(run.name) +
            "</h2><p>views: <a class=\"distributed\" href=\"" +
            EscapeHtml(DistributedLink(run.name, "")) + "\">distributed</a> (" +
            std::to_string(workers) + (workers == 1 ? " worker" : " workers") +
            (latest.empty() ? std::string() : " in span " + EscapeHtml(latest)) +
            ")</p><table><tr><th>worker</th><th>span</th><th>size</th><th></th></tr>";
    for (const TraceFile& t : run.traces) {
      html += "<tr class=\"trace\"><td>" + EscapeHtml(t.worker) + "</td><td>" + EscapeHtml(t.span) +
              "</td><td>" + Bytes(t.bytes) + "</td><td><a class=\"views\" href=\"" +
              EscapeHtml(Link("/trace", t.path)) + "\">views</a> · <a class=\"timeline\" href=\"" +
              EscapeHtml(Link("/timeline", t.path)) + "\">timeline</a> · <a href=\"" +
              EscapeHtml(Link("/download", t.path)) + "\">download</a></td></tr>";
    }
    html += "</table>";
  }
  return html + "</main><script>" + kIndexScript + "</script></body></html>";
}

std::string TraceHtml(const std::string& relative, const std::string& run,
                      const LoadedTrace& loaded) {
  const Trace& trace = *loaded.trace;
  std::string html = PageHead(relative);
  char load[32];
  std::snprintf(load, sizeof load, "%.2f s", loaded.load_seconds);
  char span[32];
  std::snprintf(span, sizeof span, "%.3f ms",
                static_cast<double>(trace.end_ns() - trace.begin_ns()) / 1e6);
  html += "<div id=\"facts\">" + Fact("events", std::to_string(trace.events.size())) +
          Fact("threads and streams", std::to_string(loaded.timeline.lanes.size())) +
          Fact("time span", span) + Fact("loaded in", load) + Fact("format", trace.source_format) +
          "</div><p><a class=\"timeline\" href=\"" + EscapeHtml(Link("/timeline", relative)) +
          "\">timeline</a> · <a href=\"" + EscapeHtml(Link("/download", relative)) +
          "\">download (open in ui.perfetto.dev)</a></p>";
  if (!trace.warnings.empty()) {
    html += "<h3>Warnings</h3><ul>";
    for (const std::string& w : trace.warnings) html += "<li>" + EscapeHtml(w) + "</li>";
    html += "</ul>";
  }
  html += "<nav>";
  for (const char* view :
       {"overview", "gpu", "recommendations", "operators", "kernels", "memory", "modules"})
    html += std::string("<a href=\"#") + view + "\">" + view + "</a> ";
  html += "· <a class=\"distributed\" href=\"" + EscapeHtml(DistributedLink(run, "")) +
          "\">distributed (the run's workers)</a></nav>" + loaded.ViewsHtml();
  return html + "</main></body></html>";
}

namespace {

// The timeline: lanes of slices on a canvas; the wheel zooms around the pointer, a drag pans;
// every change asks the server for the range in view at the canvas' width.
constexpr char kTimelineScript[] = R"JS(
(function () {
  var canvas = document.getElementById("timeline"), ctx = canvas.getContext("2d");
  var path = canvas.getAttribute("data-path"), view = null, data = null, pending = 0, asked = 0;
  var LANE_LABEL = 16, ROW = 14;
  function color(i) { var h = (i * 47) % 360; return "hsl(" + h + ",55%,62%)"; }
  function layout() {
    var y = 0, tops = [];
    (data ? data.lanes : []).forEach(function (l) { tops.push(y); y += LANE_LABEL + (l.max_depth + 1) * ROW + 4; });
    return {tops: tops, height: Math.max(y, 100)};
  }
  function draw() {
    if (!data) return;
    var lay = layout(), w = canvas.clientWidth;
    canvas.width = w; canvas.height = lay.height;
    var scale = w / (view.t1 - view.t0), drawn = 0;
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, w, lay.height);
    ctx.font = "11px sans-serif"; ctx.textBaseline = "top";
    data.lanes.forEach(function (lane, n) {
      var top = lay.tops[n];
      ctx.fillStyle = "#333"; ctx.fillText(lane.label, 4, top + 2);
      lane.blocks.forEach(function (b) {
        var x = (b[0] - view.t0) * scale, bw = Math.max(1, b[1] * scale);
        ctx.fillStyle = "#9aa5b1"; ctx.fillRect(x, top + LANE_LABEL + b[2] * ROW, bw, ROW - 1); drawn++;
      });
      lane.slices.forEach(function (s) {
        var x = (s[0] - view.t0) * scale, sw = Math.max(1, s[1] * scale), y = top + LANE_LABEL + s[2] * ROW;
        ctx.fillStyle = color(s[3]); ctx.fillRect(x, y, sw, ROW - 1); drawn++;
        if (sw > 30) { ctx.save(); ctx.beginPath(); ctx.rect(x, y, sw, ROW); ctx.clip();
          ctx.fillStyle = "#111"; ctx.fillText(data.names[s[3]], x + 2, y + 1); ctx.restore(); }
      });
    });
    document.body.setAttribute("data-drawn", String(drawn));
    document.getElementById("range").textContent = ((view.t1 - view.t0) / 1e6).toFixed(3) + " ms in view, " +
      data.ns_per_px + " ns per pixel";
  }
  function fetchView() {
    var id = ++asked;
    var url = "/api/timeline?path=" + encodeURIComponent(path) + "&t0=" + Math.floor(view.t0) +
      "&t1=" + Math.ceil(view.t1) + "&width=" + Math.max(1, canvas.clientWidth);
    fetch(url).then(function (r) { return r.json(); }).then(function (d) {
      if (id !== asked) return;
      data = d; draw();
      document.body.setAttribute("data-requests", String(id));
    });
  }
  function schedule() { clearTimeout(pending); pending = setTimeout(fetchView, 60); }
  canvas.addEventListener("wheel", function (e) {
    e.preventDefault();
    var f = e.deltaY > 0 ? 1.25 : 0.8, at = view.t0 + (e.offsetX / canvas.clientWidth) * (view.t1 - view.t0);
    view = {t0: at - (at - view.t0) * f, t1: at + (view.t1 - at) * f};
    if (view.t1 - view.t0 < 1000) view.t1 = view.t0 + 1000;
    draw(); schedule();
  });
  var dragX = null;
  canvas.addEventListener("mousedown", function (e) { dragX = e.clientX; });
  window.addEventListener("mouseup", function () { dragX = null; });
  window.addEventListener("mousemove", function (e) {
    if (dragX === null) return;
    var dt = (e.clientX - dragX) * (view.t1 - view.t0) / canvas.clientWidth;
    view = {t0: view.t0 - dt, t1: view.t1 - dt}; dragX = e.clientX; draw(); schedule();
  });
  var begin = Number(canvas.getAttribute("data-begin")), end = Number(canvas.getAttribute("data-end"));
  view = {t0: begin, t1: Math.max(end, begin + 1000)};
  fetchView();
})();
)JS";

}  // namespace

std::string TimelineHtml(const std::string& relative, const LoadedTrace& loaded) {
  std::string html = PageHead(relative + " · timeline");
  html +=
      "<p>Wheel: zoom · drag: pan · <a href=\"" + EscapeHtml(Link("/trace", relative)) +
      "\">views</a> · <span id=\"range\"></span></p></main><canvas id=\"timeline\" data-path=\"" +
      EscapeHtml(relative) + "\" data-begin=\"" + std::to_string(loaded.timeline.begin_ns) +
      "\" data-end=\"" + std::to_string(loaded.timeline.end_ns) + "\"></canvas><script>" +
      kTimelineScript + "</script></body></html>";
  return html;
}

}  // namespace profsh::serve
