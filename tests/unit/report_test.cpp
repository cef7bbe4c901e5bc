// engine/report: escaping, the timeline overview's busy shares, the Markdown rendering of each
// block and the writer's choice of format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "engine/report/escape.h"
#include "engine/report/line_downsample.h"
#include "engine/report/number_format.h"
#include "engine/report/render.h"
#include "engine/report/timeline_overview.h"
#include "tests/unit/test_util.h"

namespace profsh::report {
namespace {

TEST(ReportEscape, Html) {
  EXPECT_EQ(EscapeHtml("<a href=\"x\">'&'</a> é"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt; é");
}

TEST(ReportEscape, JsonCannotEndTheScriptElement) {
  EXPECT_EQ(JsonString("</script><!-- \"\\\n"),
            "\"\\u003c/script\\u003e\\u003c!-- \\\"\\\\\\u000a\"");
}

TEST(ReportEscape, Markdown) {
  EXPECT_EQ(EscapeMarkdown("a|b `c` *d* _e_ [f](g) <h> # & ~ !"),
            "a\\|b \\`c\\` \\*d\\* \\_e\\_ \\[f\\](g) \\<h\\> \\# \\& \\~ \\!");
  EXPECT_EQ(EscapeMarkdown("- item\nnext"), "\\- item next");
  EXPECT_EQ(EscapeMarkdownCell("-1.5"), "-1.5");  // a number in a cell is no list item
}

TEST(ReportEscape, Base64) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("foob"), "Zm9vYg==");
}

TEST(TimelineOverview, NestedRangesCountOnceAndBucketsSplit) {
  // Thread 1: [0, 40) with [10, 20) nested, then [60, 100); thread 2: one instant only.
  auto trace = testing::ImportString(R"({"traceEvents": [
    {"ph": "X", "name": "outer", "pid": 1, "tid": 1, "ts": 0, "dur": 40},
    {"ph": "X", "name": "inner", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
    {"ph": "X", "name": "late", "pid": 1, "tid": 1, "ts": 60, "dur": 40},
    {"ph": "i", "name": "mark", "pid": 1, "tid": 2, "ts": 50, "s": "t"},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}]})");
  ASSERT_TRUE(trace.ok());
  Timeline t = BuildTimelineOverview(*trace.value(), 4, 10);
  ASSERT_EQ(t.lanes.size(), 2u);
  const TimelineLane& main = t.lanes[0];
  EXPECT_EQ(main.thread, "main [tid 1]");
  EXPECT_EQ(main.events, 3u);
  EXPECT_EQ(main.busy_ns, 80000);
  ASSERT_EQ(main.busy.size(), 4u);
  EXPECT_FLOAT_EQ(main.busy[0], 1.0f);  // [0, 25): covered by outer
  EXPECT_FLOAT_EQ(main.busy[1], 0.6f);  // [25, 50): outer until 40
  EXPECT_FLOAT_EQ(main.busy[2], 0.6f);  // [50, 75): late from 60
  EXPECT_FLOAT_EQ(main.busy[3], 1.0f);
  EXPECT_EQ(t.lanes[1].busy_ns, 0);
  // Only the busiest lane kept when one is asked for.
  Timeline one = BuildTimelineOverview(*trace.value(), 4, 1);
  ASSERT_EQ(one.lanes.size(), 1u);
  EXPECT_EQ(one.lanes[0].thread, "main [tid 1]");
  EXPECT_EQ(one.lanes_left_out, 1u);
}

TEST(LineDownsample, ANarrowSpikeSurvivesThinning) {
  // 70,400 points of a slowly varying curve and one spike two points wide, as mnist's memory
  // curve: every k-th point missed it.
  Chart c;
  c.kind = ChartKind::kLine;
  ChartSeries bytes{"bytes", {}};
  for (int i = 0; i < 70400; ++i) {
    c.x.push_back(i * 0.5);
    bytes.values.push_back(i == 52345 || i == 52346 ? 403782144.0 : 1e6 + (i % 97) * 1000.0);
  }
  c.series.push_back(bytes);
  const Chart original = c;
  ThinLineChart(&c, kMaxLinePoints);
  EXPECT_EQ(c.points_before_thinning, 70400u);
  EXPECT_LE(c.x.size(), kMaxLinePoints);
  EXPECT_GT(c.x.size(), kMaxLinePoints / 2);
  ASSERT_EQ(c.series[0].values.size(), c.x.size());
  const auto& v = c.series[0].values;
  EXPECT_EQ(*std::max_element(v.begin(), v.end()), 403782144.0);
  EXPECT_EQ(*std::min_element(v.begin(), v.end()), 1e6);
  // The spike keeps where it starts and where it ends (the point after it).
  const size_t at = std::max_element(v.begin(), v.end()) - v.begin();
  EXPECT_EQ(c.x[at], 52345 * 0.5);
  ASSERT_LT(at + 1, v.size());
  EXPECT_EQ(c.x[at + 1], 52347 * 0.5);
  EXPECT_LT(v[at + 1], 403782144.0);
  EXPECT_EQ(c.x.front(), 0);
  EXPECT_EQ(c.x.back(), original.x.back());
  EXPECT_TRUE(std::is_sorted(c.x.begin(), c.x.end()));

  Chart short_line = original;
  short_line.x.resize(100);
  short_line.series[0].values.resize(100);
  ThinLineChart(&short_line, kMaxLinePoints);
  EXPECT_EQ(short_line.x.size(), 100u);
  EXPECT_EQ(short_line.points_before_thinning, 0u);
}

TEST(LineDownsample, EverySeriesKeepsItsExtremes) {
  std::vector<double> x;
  ChartSeries a{"a", {}}, b{"b", {}};
  for (int i = 0; i < 5000; ++i) {
    x.push_back(i);
    a.values.push_back(i == 10 ? -7 : i == 4000 ? 9 : 0);
    b.values.push_back(i == 2500 ? 5 : 1);
  }
  const std::vector<size_t> keep = PointsToKeep(x, {a, b}, 100);
  EXPECT_LE(keep.size(), 100u);
  for (size_t i : {size_t{10}, size_t{4000}, size_t{2500}, size_t{0}, size_t{4999}})
    EXPECT_TRUE(std::binary_search(keep.begin(), keep.end(), i)) << i;
}

TEST(NumberFormat, OneFormatPerColumn) {
  Table t;
  t.columns = {{"name", ""}, {"avg", "us"}, {"calls", ""}, {"total", "us"}, {"share", "%"}};
  t.rows = {{Cell::Text("a"), Cell::Double(2235204.2727), Cell::Int(11), Cell::Double(24587247.0),
             Cell::Double(61.234)},
            {Cell::Text("b"), Cell::Double(238.381), Cell::Int(123456), Cell::Int(-1500),
             Cell::Double(0.5)},
            {Cell::Text("c"), Cell::Double(182.75), Cell::Empty(), Cell::Double(3.0),
             Cell::Double(std::nan(""))}};
  EXPECT_EQ(ColumnDecimals(t, 0), -1);
  EXPECT_EQ(ColumnDecimals(t, 1), 1);  // the largest from 100,000 up
  EXPECT_EQ(ColumnDecimals(t, 2), 0);
  EXPECT_EQ(ColumnDecimals(t, 3), 0);  // whole values, doubles or not
  EXPECT_EQ(ColumnDecimals(t, 4), 3);  // the largest below 100
  const auto cells = FormatTableCells(t);
  EXPECT_EQ(cells[0], (std::vector<std::string>{"a", "2,235,204.3", "11", "24,587,247", "61.234"}));
  // Counts (no unit) are not grouped; a measurement is.
  EXPECT_EQ(cells[1], (std::vector<std::string>{"b", "238.4", "123456", "-1,500", "0.500"}));
  EXPECT_EQ(cells[2], (std::vector<std::string>{"c", "182.8", "", "3", "nan"}));
}

Document SmallDocument() {
  Document doc;
  doc.title = "T|1";
  Section s{"s1", "First", {}};
  s.blocks.push_back(Paragraph{"text"});
  Table table;
  table.columns = {{"name", ""}, {"time", "us"}};
  table.rows = {{Cell::Text("a|b"), Cell::Int(5)}, {Cell::Text("c"), Cell::Double(1.5)}};
  table.total_rows = 3;
  s.blocks.push_back(table);
  Chart line;
  line.kind = ChartKind::kLine;
  line.x_name = "ms";
  for (int i = 0; i < 30; ++i) line.x.push_back(i);
  line.series.push_back({"y", std::vector<double>(30, 2.0)});
  s.blocks.push_back(line);
  s.blocks.push_back(Svg{"graph", "flame.svg", "<svg/>"});
  s.blocks.push_back(SectionLink{"s1", "up"});
  doc.sections.push_back(std::move(s));
  return doc;
}

TEST(ReportMarkdown, EveryBlock) {
  std::vector<std::pair<std::string, std::string>> side;
  const std::string md = RenderMarkdown(SmallDocument(), "out/r", &side);
  EXPECT_NE(md.find("# T\\|1\n"), std::string::npos);
  EXPECT_NE(md.find("- [First](#s1)\n"), std::string::npos);
  EXPECT_NE(md.find("<a id=\"s1\"></a>\n\n## First\n"), std::string::npos);
  EXPECT_NE(
      md.find("| name | time (us) |\n|---|---:|\n| a\\|b | 5.000 |\n| c | 1.500 |\n\n2 of 3 rows "
              "shown.\n"),
      std::string::npos);
  EXPECT_NE(md.find("23 of 30 points shown: evenly spaced, and each series' highest."),
            std::string::npos);
  EXPECT_NE(md.find("| 29 | 2 |"), std::string::npos);  // the last point is kept
  EXPECT_NE(md.find("![graph](r.flame.svg)\n"), std::string::npos);
  EXPECT_NE(md.find("[up](#s1)\n"), std::string::npos);
  ASSERT_EQ(side.size(), 1u);
  EXPECT_EQ(side[0].first, "out/r.flame.svg");
}

TEST(ReportHtml, SelfContained) {
  const std::string html = RenderHtml(SmallDocument());
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\" data-v=\"5\">5.000</td>"), std::string::npos);
  EXPECT_NE(html.find("data:image/svg+xml;base64,PHN2Zy8+"), std::string::npos);
  EXPECT_NE(html.find("echarts"), std::string::npos);  // a chart brings the library
}

TEST(ReportWriter, FormatFromTheName) {
  EXPECT_FALSE(WriteReport(SmallDocument(), "/nonexistent-dir/r.txt").ok());
  const std::string dir = ::testing::TempDir();
  auto written = WriteReport(SmallDocument(), dir + "/report_test.md");
  ASSERT_TRUE(written.ok()) << written.error().message;
  ASSERT_EQ(written.value().size(), 2u);
  std::ifstream svg(dir + "/report_test.flame.svg");
  std::stringstream content;
  content << svg.rdbuf();
  EXPECT_EQ(content.str(), "<svg/>");
  for (const auto& f : written.value()) std::remove(f.c_str());
}

}  // namespace
}  // namespace profsh::report
