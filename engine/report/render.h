// The two renderings of a report document and the writer that picks one by the output's name.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/report/document.h"
#include "engine/util/result.h"

namespace profsh::report {

// One self-contained page: inline CSS, sortable tables, charts drawn by the inlined charting
// library (chart_library.h), SVGs inlined; nothing is fetched when it opens.
std::string RenderHtml(const Document& doc);

// Markdown for a pull request or a wiki: charts become tables, each SVG a file beside the report
// (`side_files`: name -> content; `file_stem` is the report's name without ".md").
std::string RenderMarkdown(const Document& doc, const std::string& file_stem,
                           std::vector<std::pair<std::string, std::string>>* side_files);

// Writes `doc` to `path` (".html"/".htm": HTML; ".md"/".markdown": Markdown, with its SVG files
// beside it), every file atomically. Returns the paths written.
Result<std::vector<std::string>> WriteReport(const Document& doc, const std::string& path);

}  // namespace profsh::report
