#include "engine/serve/distributed_view.h"

#include <algorithm>

#include "engine/report/escape.h"
#include "engine/serve/pages.h"
#include "engine/serve/trace_views.h"

namespace profsh::serve {

using report::EscapeHtml;
using report::PercentEncodePath;

std::vector<std::string> SpansOf(const Run& run) {
  std::vector<std::string> spans;
  for (const TraceFile& t : run.traces)
    if (std::find(spans.begin(), spans.end(), t.span) == spans.end()) spans.push_back(t.span);
  std::sort(spans.begin(), spans.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  return spans;
}

tensorboard::DistributedSummary RunDistributedSummary(const std::vector<RunWorker>& workers) {
  std::vector<tensorboard::DistributedWorker> figures;
  figures.reserve(workers.size());
  for (const RunWorker& w : workers) {
    figures.push_back(w.loaded->DistributedWorker());
    figures.back().name = w.file->worker;
  }
  return tensorboard::BuildDistributedSummary(std::move(figures));
}

std::string DistributedHtml(const Run& run, const std::string& span,
                            const std::vector<RunWorker>& workers,
                            const tensorboard::DistributedSummary& summary) {
  std::string html = PageHead(run.name + " · distributed");
  html += "<p id=\"workers\">" + std::to_string(workers.size()) +
          (workers.size() == 1 ? " worker" : " workers") +
          (span.empty() ? std::string() : " of span " + EscapeHtml(span)) + ":";
  for (const RunWorker& w : workers)
    html +=
        " <a class=\"worker\" href=\"/trace?path=" + EscapeHtml(PercentEncodePath(w.file->path)) +
        "\">" + EscapeHtml(w.file->worker) + "</a>";
  html += "</p>";
  std::vector<std::string> spans = SpansOf(run);
  if (spans.size() > 1) {
    html += "<p id=\"spans\">spans:";
    for (const std::string& s : spans)
      html += s == span ? " <b>" + EscapeHtml(s) + "</b>"
                        : " <a href=\"" + EscapeHtml(DistributedLink(run.name, s)) + "\">" +
                              EscapeHtml(s) + "</a>";
    html += "</p>";
  }
  tensorboard::DistributedSummaryRows rows = tensorboard::DistributedSummaryAsRows(summary);
  html += RowsSectionHtml("distributed-steps",
                          "Distributed: computation and communication per worker and step (µs)",
                          rows.steps);
  html += RowsSectionHtml("distributed-ops", "Distributed: collectives per worker (µs)", rows.ops);
  return html + "</main></body></html>";
}

}  // namespace profsh::serve
