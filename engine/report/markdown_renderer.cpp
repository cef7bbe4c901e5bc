// The Markdown rendering (GitHub's dialect): what HTML draws becomes tables, and each SVG a file
// beside the report shown as an image. Every text from a template or a trace is escaped.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "engine/io/atomic_writer.h"
#include "engine/report/escape.h"
#include "engine/report/number_format.h"
#include "engine/report/render.h"

namespace profsh::report {

namespace {

constexpr size_t kMaxLineRows = 24;  // a line chart's table shows at most this many points

std::string Ms(int64_t ns) {
  return Cell::Double(std::round(ns / 1e3) / 1e3).Format();
}

bool IsNumber(const Cell& c) {
  return c.kind == Cell::Kind::kInt || c.kind == Cell::Kind::kDouble;
}

class MarkdownWriter {
 public:
  MarkdownWriter(const Document& doc, std::string stem,
                 std::vector<std::pair<std::string, std::string>>* side_files)
      : doc_(doc), stem_(std::move(stem)), side_files_(side_files) {}

  std::string Render() {
    out_ += "# " + EscapeMarkdown(doc_.title) + "\n\n";
    if (!doc_.subtitle.empty()) out_ += EscapeMarkdown(doc_.subtitle) + "\n\n";
    for (const Section& s : doc_.sections) {
      out_ += "- [" + EscapeMarkdown(s.title) + "](#" + PercentEncodePath(s.id) + ")\n";
    }
    for (const Section& s : doc_.sections) {
      // An explicit anchor: GitHub's own, made from the heading's text, would change with it.
      out_ += "\n<a id=\"" + EscapeHtml(s.id) + "\"></a>\n\n## " + EscapeMarkdown(s.title) + "\n";
      for (const Block& b : s.blocks) {
        out_ += "\n";
        std::visit([this](const auto& x) { Write(x); }, b);
      }
    }
    return std::move(out_);
  }

 private:
  void Write(const Heading& h) { out_ += "### " + EscapeMarkdown(h.text) + "\n"; }
  void Write(const Paragraph& p) { out_ += EscapeMarkdown(p.text) + "\n"; }
  void Write(const List& l) {
    for (const auto& item : l.items) out_ += "- " + EscapeMarkdown(item) + "\n";
  }
  void Write(const SectionLink& l) {
    out_ += '[';
    out_ += EscapeMarkdown(l.text);
    out_ += "](#";
    out_ += PercentEncodePath(l.section_id);
    out_ += ")\n";
  }

  void Header(const std::vector<std::string>& names, const std::vector<bool>& numeric) {
    out_ += "|";
    for (const auto& n : names) Append(out_, {" ", EscapeMarkdownCell(n), " |"});
    out_ += "\n|";
    for (bool num : numeric) out_ += num ? "---:|" : "---|";
    out_ += "\n";
  }

  void Row(const std::vector<std::string>& cells) {
    out_ += "|";
    for (const auto& c : cells) Append(out_, {" ", EscapeMarkdownCell(c), " |"});
    out_ += "\n";
  }

  void Write(const Table& t) {
    std::vector<std::string> names;
    std::vector<bool> numeric(t.columns.size(), false);
    for (size_t c = 0; c < t.columns.size(); ++c) {
      names.push_back(t.columns[c].unit.empty()
                          ? t.columns[c].name
                          : t.columns[c].name + " (" + t.columns[c].unit + ")");
      bool any_number = false, any_text = false;
      for (const auto& row : t.rows) {
        any_number = any_number || IsNumber(row[c]);
        any_text = any_text || row[c].kind == Cell::Kind::kText;
      }
      numeric[c] = any_number && !any_text;
    }
    Header(names, numeric);
    for (const auto& cells : FormatTableCells(t)) Row(cells);
    std::string caption = t.caption;
    if (t.total_rows > t.rows.size()) {
      Append(caption, {caption.empty() ? "" : " ", std::to_string(t.rows.size()), " of ",
                       std::to_string(t.total_rows), " rows shown."});
    }
    for (const auto& note : t.notes) Append(caption, {caption.empty() ? "" : " ", note});
    if (!caption.empty()) Append(out_, {"\n", EscapeMarkdown(caption), "\n"});
  }

  // A line's table rows: evenly spaced points, the last included, and each series' highest, so
  // the table shows the peak the chart does.
  static std::vector<size_t> LineRows(const Chart& c) {
    const size_t points = c.x.size();
    std::vector<size_t> rows;
    if (points <= kMaxLineRows) {
      for (size_t i = 0; i < points; ++i) rows.push_back(i);
      return rows;
    }
    const size_t even = std::max<size_t>(2, kMaxLineRows - std::min(kMaxLineRows, c.series.size()));
    for (size_t k = 0; k < even; ++k) rows.push_back(k * (points - 1) / (even - 1));
    for (const auto& s : c.series) {
      if (s.values.empty()) continue;
      rows.push_back(static_cast<size_t>(std::max_element(s.values.begin(), s.values.end()) -
                                         s.values.begin()));
    }
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    return rows;
  }

  void Write(const Chart& c) {
    if (!c.title.empty()) out_ += "**" + EscapeMarkdown(c.title) + "**\n\n";
    const bool line = c.kind == ChartKind::kLine;
    // The chart's table, shown as any table is (one number format per column).
    Table t;
    t.columns.push_back({c.x_name.empty() ? std::string("x") : c.x_name, ""});
    for (const auto& s : c.series) t.columns.push_back({s.name, c.unit});
    std::vector<size_t> rows;
    if (line) {
      rows = LineRows(c);
    } else {
      for (size_t i = 0; i < c.categories.size(); ++i) rows.push_back(i);
    }
    for (size_t i : rows) {
      std::vector<Cell> row{line ? Cell::Double(c.x[i]) : Cell::Text(c.categories[i])};
      for (const auto& s : c.series)
        row.push_back(i < s.values.size() ? Cell::Double(s.values[i]) : Cell::Empty());
      t.rows.push_back(std::move(row));
    }
    t.total_rows = t.rows.size();
    Write(t);
    const size_t points = line ? c.x.size() : c.categories.size();
    if (rows.size() < points) {
      Append(out_, {"\n", std::to_string(rows.size()), " of ", std::to_string(points),
                    " points shown: evenly spaced, and each series' highest.\n"});
    }
    if (c.points_before_thinning > 0) {
      Append(out_, {"\nThe chart draws ", std::to_string(c.x.size()), " of ",
                    std::to_string(c.points_before_thinning),
                    " points: each stretch of time keeps its lowest and highest.\n"});
    }
  }

  void Write(const Svg& s) {
    const std::string file = stem_ + "." + s.file_name;
    side_files_->emplace_back(file, s.svg);
    const size_t slash = file.find_last_of('/');
    const std::string relative = slash == std::string::npos ? file : file.substr(slash + 1);
    out_ += "![" + EscapeMarkdown(s.title) + "](" + PercentEncodePath(relative) + ")\n";
  }

  void Write(const Timeline& t) {
    Header({"process", "thread", "events", "busy (ms)", "first (ms)", "last (ms)"},
           {false, false, true, true, true, true});
    for (const TimelineLane& lane : t.lanes) {
      Row({lane.process, lane.thread, std::to_string(lane.events), Ms(lane.busy_ns),
           Ms(lane.first_ns - t.start_ns), Ms(lane.last_ns - t.start_ns)});
    }
    if (t.lanes_left_out > 0) {
      Append(out_, {"\n", std::to_string(t.lanes_left_out), " less busy tracks left out.\n"});
    }
  }

  const Document& doc_;
  std::string stem_;
  std::vector<std::pair<std::string, std::string>>* side_files_;
  std::string out_;
};

bool EndsWith(const std::string& s, const char* suffix) {
  const std::string x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

}  // namespace

std::string RenderMarkdown(const Document& doc, const std::string& file_stem,
                           std::vector<std::pair<std::string, std::string>>* side_files) {
  return MarkdownWriter(doc, file_stem, side_files).Render();
}

Result<std::vector<std::string>> WriteReport(const Document& doc, const std::string& path) {
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  std::vector<std::pair<std::string, std::string>> files;
  if (EndsWith(lower, ".html") || EndsWith(lower, ".htm")) {
    files.emplace_back(path, RenderHtml(doc));
  } else if (EndsWith(lower, ".md") || EndsWith(lower, ".markdown")) {
    const std::string stem = path.substr(0, path.find_last_of('.'));
    std::vector<std::pair<std::string, std::string>> side;
    files.emplace_back(path, RenderMarkdown(doc, stem, &side));
    for (auto& f : side) files.push_back(std::move(f));
  } else {
    return Error{path + ": a report is written as .html or .md (the name's ending picks which)"};
  }
  std::vector<std::string> written;
  // Side files first: a Markdown report never names an image that is not there yet.
  for (size_t k = files.size(); k-- > 0;) {
    Status s = WriteFileAtomically(files[k].first, files[k].second);
    if (!s.ok()) return Error{s.message()};
    written.insert(written.begin(), files[k].first);
  }
  return written;
}

}  // namespace profsh::report
