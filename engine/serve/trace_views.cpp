#include "engine/serve/trace_views.h"

#include "engine/analysis/analysis_rows.h"
#include "engine/analysis/averages_table.h"
#include "engine/analysis/function_events.h"
#include "engine/analysis/key_averages.h"
#include "engine/analysis/tensorboard/gpu_summary.h"
#include "engine/analysis/tensorboard/kernel_summary.h"
#include "engine/analysis/tensorboard/memory_summary.h"
#include "engine/analysis/tensorboard/module_summary.h"
#include "engine/analysis/tensorboard/recommendation_inputs.h"
#include "engine/analysis/tensorboard/recommendations.h"
#include "engine/analysis/tensorboard/step_breakdown.h"
#include "engine/report/escape.h"

namespace profsh::serve {

namespace {

using report::EscapeHtml;

// Long tables (allocations, many kernels) are cut here; the note says so.
constexpr size_t kRowsShown = 200;

}  // namespace

std::string RowsSectionHtml(const std::string& id, const std::string& title,
                            const AnalysisRows& rows) {
  std::string html = "<section class=\"view\" id=\"" + id + "\"><h2>" + EscapeHtml(title) + "</h2>";
  if (rows.rows.empty()) {
    html += "<p class=\"none\">Nothing in this trace for this view.</p>";
  } else {
    html += "<table><tr>";
    for (const std::string& c : rows.columns) html += "<th>" + EscapeHtml(c) + "</th>";
    html += "</tr>";
    size_t shown = std::min(rows.rows.size(), kRowsShown);
    for (size_t r = 0; r < shown; ++r) {
      html += "<tr>";
      for (size_t c = 0; c < rows.columns.size(); ++c)
        html += "<td>" + EscapeHtml(rows.rows.cell(r, c).Format()) + "</td>";
      html += "</tr>";
    }
    html += "</table>";
    if (shown < rows.rows.size())
      html += "<p class=\"note\">" + std::to_string(shown) + " of " +
              std::to_string(rows.rows.size()) + " rows shown.</p>";
  }
  for (const std::string& note : rows.notes)
    html += "<p class=\"note\">" + EscapeHtml(note) + "</p>";
  return html + "</section>";
}

namespace {

std::string OperatorTable(const Trace& trace) {
  std::shared_ptr<const FunctionEvents> events = BuildFunctionEvents(trace);
  KeyAverages averages = ComputeKeyAverages(events, false, 0);
  TableOptions options;
  options.sort_by = "self_cpu_time_total";
  options.row_limit = 50;
  Result<std::string> text = BuildAveragesTable(averages, options);
  return "<section class=\"view\" id=\"operators\"><h2>Operators</h2><pre>" +
         EscapeHtml(text.ok() ? text.value() : text.error().message) + "</pre></section>";
}

}  // namespace

std::string TraceViewsHtml(const Trace& trace) {
  std::string html;
  StepBreakdown steps = ComputeStepBreakdown(trace);
  html +=
      RowsSectionHtml("overview", "Overview: step time breakdown (µs)", StepBreakdownRows(steps));
  html += RowsSectionHtml("overview-average", "Average step", StepBreakdownAverageRows(steps));
  html += RowsSectionHtml("gpu", "GPU summary", GpuSummaryRows(ComputeGpuSummary(trace)));
  PluginRuleInputs inputs = PluginRuleInputsOf(trace);
  html += RowsSectionHtml("recommendations", "Recommendations",
                          RecommendationRows(trace, RecommendationOptions{}, &inputs));
  html += OperatorTable(trace);
  html += RowsSectionHtml("kernels", "Kernels", KernelSummaryRows(ComputeKernelSummary(trace)));
  tensorboard::MemorySummaryRows memory =
      tensorboard::MemorySummaryAsRows(tensorboard::BuildMemorySummary(trace));
  html += RowsSectionHtml("memory", "Memory: devices", memory.devices);
  html += RowsSectionHtml("memory-operators", "Memory: operators", memory.operators);
  html += RowsSectionHtml("memory-allocations", "Memory: allocations", memory.allocations);
  html += RowsSectionHtml("modules", "Modules",
                          tensorboard::ModuleSummaryRows(tensorboard::BuildModuleSummary(trace)));
  return html;
}

}  // namespace profsh::serve
