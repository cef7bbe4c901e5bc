// The HTML rendering: one file, no network. Tables sort on a header click (numbers by the value
// kept in data-v), charts are ECharts' SVG renderer fed from a JSON block beside each chart,
// flamegraphs keep their own script inside an iframe, the timeline is an SVG drawn here.
#include <cmath>
#include <cstdio>
#include <string>

#include "engine/report/chart_library.h"
#include "engine/report/escape.h"
#include "engine/report/number_format.h"
#include "engine/report/render.h"
#include "engine/util/utf8.h"

#ifndef PROFSH_VERSION
#define PROFSH_VERSION "0.0.0"
#endif

namespace profsh::report {

namespace {

constexpr char kStyle[] = R"css(
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--head:#f6f8fa;--accent:#0969da}
body{font:14px/1.5 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg);margin:0}
header{padding:16px 32px;border-bottom:1px solid var(--line);background:var(--head)}
header h1{margin:0 0 4px;font-size:22px}
header .sub{color:var(--muted);margin:0}
nav ul{list-style:none;padding:0;margin:8px 0 0;display:flex;flex-wrap:wrap;gap:4px 16px}
nav a,a{color:var(--accent);text-decoration:none}
main{padding:8px 32px 32px;max-width:1400px}
section{margin-top:24px}
h2{font-size:18px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px}
.wide{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:6px 0;font-size:13px}
th,td{border:1px solid var(--line);padding:3px 8px;vertical-align:top}
th{background:var(--head);cursor:pointer;user-select:none;white-space:nowrap}
th .unit{color:var(--muted);font-weight:normal}
th[aria-sort=descending]::after{content:" \25BE"}
th[aria-sort=ascending]::after{content:" \25B4"}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.text{max-width:640px;overflow-wrap:break-word}
td.text.short{white-space:nowrap}
caption{text-align:left;color:var(--muted);caption-side:bottom;padding-top:4px}
.note{color:var(--muted)}
.chart{width:100%;max-width:1100px;height:340px}
iframe.svg{width:100%;max-width:1220px;border:1px solid var(--line)}
svg.timeline text{font-size:11px;fill:var(--fg)}
footer{color:var(--muted);padding:16px 32px;border-top:1px solid var(--line)}
)css";

// Sortable tables, then the charts (when the library is there).
constexpr char kScript[] = R"js(
(function () {
  function value(td) { var v = td.getAttribute("data-v"); return v === null ? -Infinity : parseFloat(v); }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var descending = th.getAttribute("aria-sort") !== "descending";
        var numeric = th.classList.contains("num");
        rows.sort(function (a, b) {
          var x = a.cells[col], y = b.cells[col];
          var r = numeric ? value(x) - value(y) : x.textContent.localeCompare(y.textContent);
          return descending ? -r : r;
        });
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  if (typeof echarts === "undefined") return;
  // Values in the unit a reader takes in at a glance: 403782144 bytes -> "403.8 MB",
  // 2235204 us -> "2.2 s"; other units keep their name after the number.
  var SCALES = {bytes: [[1e12, "TB"], [1e9, "GB"], [1e6, "MB"], [1e3, "kB"], [1, "B"]],
                ns: [[1e9, "s"], [1e6, "ms"], [1e3, "\u00b5s"], [1, "ns"]],
                us: [[1e6, "s"], [1e3, "ms"], [1, "\u00b5s"]], ms: [[1e3, "s"], [1, "ms"]]};
  function formatterOf(unit) {
    var scale = SCALES[unit];
    return function (v) {
      if (typeof v !== "number" || !isFinite(v)) return String(v);
      var x = v, name = unit;
      if (scale) {
        var i = 0;
        while (i + 1 < scale.length && Math.abs(v) < scale[i][0]) i++;
        x = v / scale[i][0]; name = scale[i][1];
      }
      var digits = x === Math.round(x) ? 0 : Math.abs(x) >= 10 ? 1 : 2;
      return x.toLocaleString("en-US", {maximumFractionDigits: digits}) + (name ? " " + name : "");
    };
  }
  function optionOf(s) {
    var value = formatterOf(s.unit);
    var o = {animation: false, tooltip: {trigger: "axis", confine: true, valueFormatter: value},
             legend: {type: "scroll", top: 0},
             grid: {left: 16, right: 40, top: 36, bottom: s.kind === "line" ? 56 : 16, containLabel: true},
             yAxis: {type: "value", axisLabel: {formatter: value}}, series: []};
    if (s.kind === "line") {
      o.xAxis = {type: "value", name: s.x_name, min: "dataMin", max: "dataMax",
                 axisLabel: {formatter: formatterOf("")}};
      o.dataZoom = [{type: "inside"}, {type: "slider", height: 18, bottom: 8}];
      s.series.forEach(function (se) {
        o.series.push({type: "line", name: se.name, showSymbol: false, step: s.step ? "end" : false,
                       data: se.values.map(function (v, i) { return [s.x[i], v]; })});
      });
    } else {
      o.xAxis = {type: "category", data: s.categories,
                 axisLabel: {rotate: s.categories.length > 6 ? 30 : 0, width: 160, overflow: "truncate"}};
      s.series.forEach(function (se) {
        o.series.push({type: "bar", name: se.name, stack: s.kind === "stacked" ? "all" : undefined,
                       data: se.values});
      });
    }
    return o;
  }
  var charts = [];
  document.querySelectorAll("div.chart").forEach(function (el) {
    var spec = JSON.parse(document.getElementById(el.id + "-data").textContent);
    var chart = echarts.init(el, null, {renderer: "svg"});
    chart.setOption(optionOf(spec));
    charts.push(chart);
    el.setAttribute("data-rendered", "true");
  });
  window.addEventListener("resize", function () { charts.forEach(function (c) { c.resize(); }); });
})();
)js";

constexpr size_t kShortText = 40;  // characters

std::string Number(double v) {
  if (!std::isfinite(v)) return "null";  // JSON has no NaN or infinity
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// At most `max` bytes, "..." at the end when cut, never inside a UTF-8 sequence.
std::string Shorten(const std::string& text, size_t max) {
  if (text.size() <= max) return text;
  size_t cut = max - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

bool IsNumber(const Cell& c) {
  return c.kind == Cell::Kind::kInt || c.kind == Cell::Kind::kDouble;
}

double ValueOf(const Cell& c) {
  return c.kind == Cell::Kind::kInt ? static_cast<double>(c.int_value) : c.double_value;
}

class HtmlWriter {
 public:
  explicit HtmlWriter(const Document& doc) : doc_(doc) {}

  std::string Render() {
    bool has_charts = false;
    for (const Section& s : doc_.sections)
      for (const Block& b : s.blocks) has_charts = has_charts || std::holds_alternative<Chart>(b);
    out_ += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out_ += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out_ += "<meta name=\"generator\" content=\"profsh " PROFSH_VERSION "\">\n";
    out_ += "<title>" + EscapeHtml(doc_.title) + "</title>\n<style>" + kStyle + "</style>\n";
    out_ += "</head>\n<body>\n<header>\n<h1>" + EscapeHtml(doc_.title) + "</h1>\n";
    if (!doc_.subtitle.empty()) out_ += "<p class=\"sub\">" + EscapeHtml(doc_.subtitle) + "</p>\n";
    out_ += "<nav><ul>\n";
    for (const Section& s : doc_.sections) {
      out_ += "<li><a href=\"#" + EscapeHtml(s.id) + "\">" + EscapeHtml(s.title) + "</a></li>\n";
    }
    out_ += "</ul></nav>\n</header>\n<main>\n";
    for (const Section& s : doc_.sections) {
      out_ += "<section id=\"" + EscapeHtml(s.id) + "\">\n<h2>" + EscapeHtml(s.title) + "</h2>\n";
      for (const Block& b : s.blocks) std::visit([this](const auto& x) { Write(x); }, b);
      out_ += "</section>\n";
    }
    out_ += "</main>\n<footer>Made by profsh " PROFSH_VERSION;
    if (has_charts) out_ += " with Apache ECharts " + std::string(ChartLibraryVersion());
    out_ += ".</footer>\n";
    if (has_charts) {
      // The library may hold "</script" or "<!--" in a string, which would end the element
      // or switch the HTML parser's script states; "<\/" and "<\!" read the same in JavaScript.
      std::string library(ChartLibrarySource());
      for (size_t at = 0; (at = library.find("</", at)) != std::string::npos; at += 3) {
        library.replace(at, 2, "<\\/");
      }
      for (size_t at = 0; (at = library.find("<!--", at)) != std::string::npos; at += 5) {
        library.replace(at, 2, "<\\!");
      }
      out_ += "<script>" + library + "</script>\n";
    }
    out_ += std::string("<script>") + kScript + "</script>\n</body>\n</html>\n";
    return std::move(out_);
  }

 private:
  void Write(const Heading& h) { out_ += "<h3>" + EscapeHtml(h.text) + "</h3>\n"; }
  void Write(const Paragraph& p) { out_ += "<p>" + EscapeHtml(p.text) + "</p>\n"; }
  void Write(const List& l) {
    out_ += "<ul>\n";
    for (const auto& item : l.items) out_ += "<li>" + EscapeHtml(item) + "</li>\n";
    out_ += "</ul>\n";
  }
  void Write(const SectionLink& l) {
    out_ += "<p><a href=\"#" + EscapeHtml(l.section_id) + "\">" + EscapeHtml(l.text) + "</a></p>\n";
  }

  void Write(const Table& t) {
    std::vector<bool> numeric(t.columns.size(), false);
    for (size_t c = 0; c < t.columns.size(); ++c) {
      bool any_number = false, any_text = false;
      for (const auto& row : t.rows) {
        any_number = any_number || IsNumber(row[c]);
        any_text = any_text || row[c].kind == Cell::Kind::kText;
      }
      numeric[c] = any_number && !any_text;
    }
    out_ += "<div class=\"wide\"><table class=\"sortable\">\n";
    if (!t.caption.empty() || t.total_rows > t.rows.size() || !t.notes.empty()) {
      out_ += "<caption>" + EscapeHtml(t.caption);
      if (t.total_rows > t.rows.size()) {
        out_ += (t.caption.empty() ? "" : " ") + std::to_string(t.rows.size()) + " of " +
                std::to_string(t.total_rows) + " rows shown.";
      }
      for (const auto& note : t.notes) out_ += "<br>" + EscapeHtml(note);
      out_ += "</caption>\n";
    }
    out_ += "<thead><tr>";
    for (size_t c = 0; c < t.columns.size(); ++c) {
      out_ += numeric[c] ? "<th class=\"num\"" : "<th";
      if (static_cast<int>(c) == t.sort_column) {
        out_ += t.descending ? " aria-sort=\"descending\"" : " aria-sort=\"ascending\"";
      }
      Append(out_, {">", EscapeHtml(t.columns[c].name)});
      if (!t.columns[c].unit.empty()) {
        out_ += " <span class=\"unit\">(" + EscapeHtml(t.columns[c].unit) + ")</span>";
      }
      out_ += "</th>";
    }
    out_ += "</tr></thead>\n<tbody>\n";
    const std::vector<std::vector<std::string>> shown = FormatTableCells(t);
    for (size_t r = 0; r < t.rows.size(); ++r) {
      const auto& row = t.rows[r];
      out_ += "<tr>";
      for (size_t c = 0; c < row.size(); ++c) {
        const Cell& cell = row[c];
        if (IsNumber(cell)) {
          out_ += "<td class=\"num\" data-v=\"" + Number(ValueOf(cell)) + "\">" +
                  EscapeHtml(shown[r][c]) + "</td>";
        } else {
          // A short text (a name, a region) stays on one line, however many columns squeeze it;
          // a longer one wraps between words.
          out_ += Utf8Length(shown[r][c]) <= kShortText ? "<td class=\"text short\">"
                                                        : "<td class=\"text\">";
          out_ += EscapeHtml(shown[r][c]) + "</td>";
        }
      }
      out_ += "</tr>\n";
    }
    out_ += "</tbody>\n</table></div>\n";
  }

  void Write(const Chart& c) {
    const std::string id = "chart-" + std::to_string(++charts_);
    if (!c.title.empty()) out_ += "<h3>" + EscapeHtml(c.title) + "</h3>\n";
    out_ += "<div class=\"chart\" id=\"" + id + "\" role=\"img\" aria-label=\"" +
            EscapeHtml(c.title) + "\"></div>\n";
    out_ += "<script type=\"application/json\" id=\"" + id + "-data\">{\"kind\":";
    out_ += c.kind == ChartKind::kLine         ? "\"line\""
            : c.kind == ChartKind::kStackedBar ? "\"stacked\""
                                               : "\"bar\"";
    out_ += ",\"x_name\":" + JsonString(c.x_name) + ",\"unit\":" + JsonString(c.unit);
    out_ += std::string(",\"step\":") + (c.step ? "true" : "false") + ",\"categories\":[";
    for (size_t i = 0; i < c.categories.size(); ++i) {
      Append(out_, {i ? "," : "", JsonString(c.categories[i])});
    }
    out_ += "],\"x\":[";
    for (size_t i = 0; i < c.x.size(); ++i) Append(out_, {i ? "," : "", Number(c.x[i])});
    out_ += "],\"series\":[";
    for (size_t s = 0; s < c.series.size(); ++s) {
      out_ += (s ? ",{\"name\":" : "{\"name\":") + JsonString(c.series[s].name) + ",\"values\":[";
      for (size_t i = 0; i < c.series[s].values.size(); ++i) {
        Append(out_, {i ? "," : "", Number(c.series[s].values[i])});
      }
      out_ += "]}";
    }
    out_ += "]}</script>\n";
    if (c.points_before_thinning > 0) {
      out_ += "<p class=\"note\">Drawn from " + std::to_string(c.x.size()) + " of " +
              std::to_string(c.points_before_thinning) +
              " points: each stretch of time keeps its lowest and highest.</p>\n";
    }
  }

  void Write(const Svg& s) {
    // In an iframe of its own, the SVG's script and ids cannot meet the page's or another's.
    double height = 400;
    const size_t at = s.svg.find(" height=\"");
    if (at != std::string::npos) height = std::atof(s.svg.c_str() + at + 9);
    if (!s.title.empty()) out_ += "<h3>" + EscapeHtml(s.title) + "</h3>\n";
    out_ += "<iframe class=\"svg\" sandbox=\"allow-scripts\" title=\"" + EscapeHtml(s.title) +
            "\" style=\"height:" + Number(std::ceil(height) + 4) +
            "px\" src=\"data:image/svg+xml;base64," + Base64(s.svg) + "\"></iframe>\n";
  }

  void Write(const Timeline& t) {
    constexpr int kLabelWidth = 300, kPlotWidth = 800, kLane = 16, kTop = 18;
    const size_t buckets = t.lanes.empty() ? 1 : t.lanes[0].busy.size();
    const double bucket_width = static_cast<double>(kPlotWidth) / buckets;
    const int height = kTop + static_cast<int>(t.lanes.size()) * kLane + 4;
    out_ += "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
            std::to_string(kLabelWidth + kPlotWidth + 10) + "\" height=\"" +
            std::to_string(height) + "\">\n";
    const double span_ms = (t.end_ns - t.start_ns) / 1e6;
    out_ += "<text x=\"" + std::to_string(kLabelWidth) + "\" y=\"12\">0 ms</text>";
    out_ += "<text x=\"" + std::to_string(kLabelWidth + kPlotWidth) +
            "\" y=\"12\" text-anchor=\"end\">" + Number(std::round(span_ms * 1000) / 1000) +
            " ms</text>\n";
    for (size_t l = 0; l < t.lanes.size(); ++l) {
      const TimelineLane& lane = t.lanes[l];
      const int y = kTop + static_cast<int>(l) * kLane;
      const std::string label = lane.process + " / " + lane.thread;
      // The thread first: a process is often a long path, the same on every lane of it.
      const size_t slash = lane.process.rfind('/');
      const std::string shown =
          lane.thread + " — " +
          (slash == std::string::npos ? lane.process : lane.process.substr(slash + 1));
      out_ += "<g><title>" + EscapeHtml(label) + ": " + std::to_string(lane.events) +
              " events, busy " + Number(std::round(lane.busy_ns / 1e3) / 1e3) + " ms</title>";
      out_ += "<rect x=\"" + std::to_string(kLabelWidth) + "\" y=\"" + std::to_string(y) +
              "\" width=\"" + std::to_string(kPlotWidth) + "\" height=\"" +
              std::to_string(kLane - 2) + "\" fill=\"#f0f2f5\"/>";
      out_ += "<text x=\"4\" y=\"" + std::to_string(y + 11) + "\">" +
              EscapeHtml(Shorten(shown, 48)) + "</text>";
      // Runs of buckets of the same shade (tenths) as one rectangle keep the SVG small.
      size_t k = 0;
      while (k < buckets) {
        const int shade = static_cast<int>(std::ceil(lane.busy[k] * 10));
        size_t end = k + 1;
        while (end < buckets && static_cast<int>(std::ceil(lane.busy[end] * 10)) == shade) ++end;
        if (shade > 0) {
          out_ += "<rect x=\"" + Number(kLabelWidth + k * bucket_width) + "\" y=\"" +
                  std::to_string(y) + "\" width=\"" + Number((end - k) * bucket_width) +
                  "\" height=\"" + std::to_string(kLane - 2) +
                  "\" fill=\"#1f6feb\" fill-opacity=\"" + Number(shade / 10.0) + "\"/>";
        }
        k = end;
      }
      out_ += "</g>\n";
    }
    out_ += "</svg>\n";
    if (t.lanes_left_out > 0) {
      out_ += "<p class=\"note\">" + std::to_string(t.lanes_left_out) +
              " less busy tracks left out.</p>\n";
    }
  }

  const Document& doc_;
  std::string out_;
  int charts_ = 0;
};

}  // namespace

std::string RenderHtml(const Document& doc) {
  return HtmlWriter(doc).Render();
}

}  // namespace profsh::report
