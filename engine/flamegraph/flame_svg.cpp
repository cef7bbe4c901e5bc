#include "engine/flamegraph/flame_svg.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "engine/flamegraph/flame_script.h"
#include "engine/io/atomic_writer.h"
#include "engine/util/hash.h"
#include "engine/util/human_text.h"
#include "engine/util/utf8.h"

namespace profsh {

namespace {

constexpr double kXPad = 10;
constexpr int kFramePad = 1;

std::string Fixed(double v, int decimals) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed, decimals);
  return std::string(buf, r.ptr);
}

// XML text: escapes what would end an element or an attribute; bytes that are not UTF-8 (folded
// files are plain bytes) become U+FFFD so that the SVG stays well-formed.
void AppendEscaped(std::string& out, std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      size_t len =
          Utf8SequenceLength(reinterpret_cast<const unsigned char*>(s.data() + i), s.size() - i);
      if (len == 0) {
        out += "\xEF\xBF\xBD";
      } else {
        out.append(s.substr(i, len));
        i += len - 1;
      }
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // Control characters are not allowed in XML 1.0 text.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
}

// Three numbers in [0, 1) from a frame name, so that a name keeps its colour from one graph to
// the next.
void NameHash(std::string_view name, double* v1, double* v2, double* v3) {
  uint64_t h = HashBytes(name, 0x5bd1e995);
  *v1 = static_cast<double>(h & 0xffff) / 65536.0;
  *v2 = static_cast<double>((h >> 16) & 0xffff) / 65536.0;
  *v3 = static_cast<double>((h >> 32) & 0xffff) / 65536.0;
}

std::string Rgb(double r, double g, double b) {
  return "rgb(" + std::to_string(static_cast<int>(r)) + "," + std::to_string(static_cast<int>(g)) +
         "," + std::to_string(static_cast<int>(b)) + ")";
}

std::string PaletteColor(const std::string& palette, std::string_view name) {
  double v1, v2, v3;
  NameHash(name, &v1, &v2, &v3);
  std::string p = palette;
  if (p == "java") {
    // Java/C++/kernel as async-profiler's and flamegraph.pl's java palette tell them apart.
    if (name.ends_with("_[k]"))
      p = "orange";
    else if (name.find("::") != std::string_view::npos)
      p = "yellow";
    else if (name.find('/') != std::string_view::npos || name.ends_with("_[j]"))
      p = "green";
    else
      p = "red";
  } else if (p == "torch") {
    if (name.find(".py(") != std::string_view::npos)
      p = "green";
    else if (name.starts_with("aten::") || name.starts_with("c10d::"))
      p = "aqua";
    else if (name.starts_with("nn.Module:"))
      p = "purple";
    else if (name.find("kernel") != std::string_view::npos || name.starts_with("void "))
      p = "red";
    else
      p = "yellow";
  }
  if (p == "hot") return Rgb(205 + 50 * v3, 230 * v1, 55 * v2);
  if (p == "mem") return Rgb(0, 190 + 50 * v2, 210 * v1);
  if (p == "io") return Rgb(80 + 60 * v1, 80 + 60 * v1, 190 + 55 * v2);
  if (p == "red") return Rgb(200 + 55 * v1, 50 + 80 * v1, 50 + 80 * v1);
  if (p == "green") return Rgb(50 + 60 * v1, 200 + 55 * v1, 50 + 60 * v1);
  if (p == "blue") return Rgb(80 + 60 * v1, 80 + 60 * v1, 205 + 50 * v1);
  if (p == "yellow") return Rgb(175 + 55 * v1, 175 + 55 * v1, 50 + 20 * v1);
  if (p == "purple") return Rgb(190 + 65 * v1, 80 + 60 * v1, 190 + 65 * v1);
  if (p == "aqua") return Rgb(50 + 60 * v1, 165 + 55 * v1, 165 + 55 * v1);
  if (p == "orange") return Rgb(190 + 65 * v1, 90 + 65 * v1, 0);
  return Rgb(205 + 50 * v3, 230 * v1, 55 * v2);
}

// Growth red, shrinkage blue, stronger the larger the change.
std::string DeltaColor(double delta, double max_delta, bool negate) {
  if (negate) delta = -delta;
  if (max_delta <= 0 || delta == 0) return "rgb(250,250,250)";
  int fade = static_cast<int>(210 - 210 * std::min(1.0, std::fabs(delta) / max_delta));
  return delta > 0 ? Rgb(255, fade, fade) : Rgb(fade, fade, 255);
}

}  // namespace

const std::vector<std::string>& FlamePalettes() {
  static const std::vector<std::string> names = {"hot",    "mem",    "io",    "java",
                                                 "torch",  "red",    "green", "blue",
                                                 "yellow", "purple", "aqua",  "orange"};
  return names;
}

Result<FlameSummary> RenderFlamegraph(FoldedStacks& stacks, const FlameOptions& o,
                                      std::string* svg) {
  const auto& palettes = FlamePalettes();
  if (std::find(palettes.begin(), palettes.end(), o.colors) == palettes.end()) {
    std::string list;
    for (const auto& p : palettes) list += (list.empty() ? "" : ", ") + p;
    return Error{"unknown colour palette '" + o.colors + "' (palettes: " + list + ")"};
  }
  if (o.width < 2 * kXPad + 10) return Error{"flamegraph width must be at least 30 pixels"};
  if (o.frame_height < 1 || o.font_size <= 0 || o.min_width < 0) {
    return Error{"flamegraph frame height and font size must be positive, minwidth not negative"};
  }
  stacks.Sort();
  double total = stacks.total();
  if (!(total > 0))
    return Error{stacks.name() + ": the stacks add up to nothing to draw (total is 0)"};
  const double width_per_value = (o.width - 2 * kXPad) / total;
  const double min_value =
      o.min_width_percent ? total * o.min_width / 100.0 : o.min_width / width_per_value;
  FlameLayout layout = LayoutFlames(stacks, min_value);

  const double ypad1 = o.font_size * 3, ypad2 = o.font_size * 2 + 10, ypad3 = o.font_size * 2;
  const bool has_subtitle = !o.subtitle.empty();
  const double height =
      (layout.max_depth + 1) * o.frame_height + ypad1 + ypad2 + (has_subtitle ? ypad3 : 0);
  const std::string title =
      !o.title.empty() ? o.title : (o.reverse ? "Icicle Graph" : "Flame Graph");

  std::string out;
  out.reserve(layout.frames.size() * 220 + 8192);
  out += "<?xml version=\"1.0\" standalone=\"no\"?>\n";
  out += "<svg version=\"1.1\" width=\"" + std::to_string(o.width) + "\" height=\"" +
         Fixed(height, 0) + "\" viewBox=\"0 0 " + std::to_string(o.width) + " " + Fixed(height, 0) +
         "\" onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\" data-xpad=\"" +
         Fixed(kXPad, 0) + "\" data-font-size=\"" + Fixed(o.font_size, 2) +
         "\" data-font-width=\"" + Fixed(o.font_width, 2) +
         "\" data-search-color=\"rgb(230,0,230)\">\n";
  out += "<!-- Made by profsh. Click a frame to zoom, Ctrl-F to search. -->\n";
  out +=
      "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
      "</linearGradient></defs>\n";
  out +=
      "<style type=\"text/css\">\n"
      "text { font-family: Verdana, sans-serif; font-size: " +
      Fixed(o.font_size, 0) +
      "px; fill: rgb(0,0,0); }\n"
      "#search, #unzoom { cursor: pointer; }\n"
      "#search { opacity: 0.1; } #search:hover, #search.show { opacity: 1; }\n"
      "#title { text-anchor: middle; font-size: " +
      Fixed(o.font_size + 5, 0) +
      "px; }\n"
      "#subtitle { text-anchor: middle; fill: rgb(160,160,160); }\n"
      "#frames > *:hover { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
      ".hide { display: none; } .parent { opacity: 0.5; }\n"
      "</style>\n";
  out += "<script type=\"text/ecmascript\"><![CDATA[";
  out += kFlameScript;
  out += "]]></script>\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + std::to_string(o.width) + "\" height=\"" +
         Fixed(height, 0) + "\" fill=\"url(#background)\"/>\n";
  out += "<text id=\"title\" x=\"" + Fixed(o.width / 2.0, 2) + "\" y=\"" +
         Fixed(o.font_size * 2, 2) + "\">";
  AppendEscaped(out, title);
  out += "</text>\n";
  if (has_subtitle) {
    out += "<text id=\"subtitle\" x=\"" + Fixed(o.width / 2.0, 2) + "\" y=\"" + Fixed(ypad1, 2) +
           "\">";
    AppendEscaped(out, o.subtitle);
    out += "</text>\n";
  }
  out += "<text id=\"details\" x=\"" + Fixed(kXPad, 2) + "\" y=\"" + Fixed(height - ypad2 / 2, 2) +
         "\"> </text>\n";
  out += "<text id=\"unzoom\" class=\"hide\" x=\"" + Fixed(kXPad, 2) + "\" y=\"" +
         Fixed(o.font_size * 2, 2) + "\">Reset Zoom</text>\n";
  out += "<text id=\"search\" x=\"" + Fixed(o.width - kXPad - 100, 2) + "\" y=\"" +
         Fixed(o.font_size * 2, 2) + "\">Search</text>\n";
  out += "<text id=\"matched\" class=\"hide\" x=\"" + Fixed(o.width - kXPad - 100, 2) + "\" y=\"" +
         Fixed(height - ypad2 / 2, 2) + "\"> </text>\n";
  out += "<g id=\"frames\">\n";

  const double top = ypad1 + (has_subtitle ? ypad3 : 0);
  for (const FlameFrame& f : layout.frames) {
    // Both edges are rounded to the 0.1 px grid the SVG is written in, so a child's edges never
    // fall outside its parent's and the script's containment tests can be exact.
    const double x1 = std::round((kXPad + f.start * width_per_value) * 10) / 10;
    const double w = std::round((kXPad + (f.start + f.value) * width_per_value) * 10) / 10 - x1;
    double y1, y2;
    if (o.reverse) {
      y1 = top + f.depth * o.frame_height;
      y2 = top + (f.depth + 1) * o.frame_height - kFramePad;
    } else {
      y1 = height - ypad2 - (f.depth + 1) * o.frame_height + kFramePad;
      y2 = height - ypad2 - f.depth * o.frame_height;
    }
    std::string_view name = f.depth == 0 ? std::string_view("all") : f.name;
    std::string pct = Fixed(100.0 * f.value / total, 2);
    out += "<g data-depth=\"" + std::to_string(f.depth) + "\"><title>";
    AppendEscaped(out, name);
    out += " (" + GroupedNumber(f.value, 0) + " ";
    AppendEscaped(out, o.count_name);
    out += ", " + (f.depth == 0 ? std::string("100") : pct) + "%";
    if (layout.differential && f.depth > 0) {
      double d = o.negate ? -f.delta : f.delta;
      out += std::string("; ") + (d > 0 ? "+" : "") + Fixed(100.0 * d / total, 2) + "%";
    }
    out += ")</title><rect x=\"" + Fixed(x1, 1) + "\" y=\"" + Fixed(y1, 1) + "\" width=\"" +
           Fixed(w, 1) + "\" height=\"" + Fixed(y2 - y1, 1) + "\" fill=\"";
    if (layout.differential) {
      out += DeltaColor(f.delta, layout.max_delta, o.negate);
    } else {
      out += PaletteColor(o.colors, name);
    }
    out += "\" rx=\"2\" ry=\"2\"/><text x=\"" + Fixed(x1 + 3, 2) + "\" y=\"" +
           Fixed(3 + (y1 + y2) / 2, 2) + "\">";
    size_t chars = static_cast<size_t>(w / (o.font_size * o.font_width));
    if (chars >= 3) {
      if (Utf8Length(name) > chars) {
        AppendEscaped(out, Utf8Prefix(name, chars - 2));
        out += "..";
      } else {
        AppendEscaped(out, name);
      }
    }
    out += "</text></g>\n";
  }
  out += "</g>\n</svg>\n";

  *svg = std::move(out);
  FlameSummary summary;
  summary.stacks = stacks.size();
  summary.ignored_lines = stacks.ignored_lines();
  summary.frames_drawn = layout.frames.size();
  summary.total = total;
  return summary;
}

Result<FlameSummary> WriteFlamegraph(FoldedStacks& stacks, const FlameOptions& options,
                                     const std::string& path) {
  std::string svg;
  auto summary = RenderFlamegraph(stacks, options, &svg);
  if (!summary.ok()) return summary;
  Status s = WriteFileAtomically(path, svg);
  if (!s.ok()) return Error{s.message()};
  return summary;
}

}  // namespace profsh
