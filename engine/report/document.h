// A report as a document: sections of headings, paragraphs, tables, charts, embedded SVGs and a
// timeline overview. Templates (Lua, bindings/lua_report.cpp) fill it; html_renderer and
// markdown_renderer turn the same document into one self-contained page or a Markdown file.
// It holds aggregated figures only (rows, chart points, timeline buckets), never raw events, so
// a report of a large trace stays small.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "engine/analysis/analysis_rows.h"

namespace profsh::report {

struct Heading {
  std::string text;
};

struct Paragraph {
  std::string text;
};

// A bullet list (warnings, notes).
struct List {
  std::vector<std::string> items;
};

// A link to another section of the same report, by its id.
struct SectionLink {
  std::string section_id;
  std::string text;
};

struct TableColumn {
  std::string name;
  std::string unit;  // shown beside the name ("us", "bytes", "%"); empty when none
};

struct Table {
  std::string caption;
  std::vector<TableColumn> columns;
  std::vector<std::vector<Cell>> rows;
  int sort_column = -1;  // the column the rows are sorted by (-1: as given)
  bool descending = true;
  size_t total_rows = 0;  // the rows the source had, before the report's row limit
  std::vector<std::string> notes;
};

enum class ChartKind { kBar, kStackedBar, kLine };

struct ChartSeries {
  std::string name;
  std::vector<double> values;  // one per category (bars) or per x (lines)
};

// Bars: one bar (or stack) per category, one colour per series. Lines: y over x (time).
// A per-rank chart is a bar chart whose categories are the ranks.
struct Chart {
  ChartKind kind = ChartKind::kBar;
  std::string title;
  std::string x_name;
  std::string unit;  // of the values
  std::vector<std::string> categories;
  std::vector<double> x;  // lines only, ascending
  bool step = false;      // lines: a value holds until the next x (a memory total)
  std::vector<ChartSeries> series;
  size_t points_before_thinning = 0;  // lines thinned by ThinLineChart: the points they had
};

// An SVG profsh drew (a flamegraph): inlined into the page, a file beside a Markdown report.
struct Svg {
  std::string title;
  std::string file_name;  // the Markdown side file's suffix, e.g. "flamegraph.svg"
  std::string svg;
};

// Processes, threads and GPU streams over the trace: how busy each track is in each time bucket.
struct TimelineLane {
  std::string process;
  std::string thread;
  size_t events = 0;
  int64_t busy_ns = 0;
  int64_t first_ns = 0, last_ns = 0;
  std::vector<float> busy;  // per bucket, 0..1
};

struct Timeline {
  int64_t start_ns = 0, end_ns = 0;
  std::vector<TimelineLane> lanes;
  size_t lanes_left_out = 0;
};

using Block = std::variant<Heading, Paragraph, List, SectionLink, Table, Chart, Svg, Timeline>;

struct Section {
  std::string id;  // the anchor links use; unique in the document
  std::string title;
  std::vector<Block> blocks;
};

struct Document {
  std::string title;
  std::string subtitle;
  std::vector<Section> sections;
};

}  // namespace profsh::report
