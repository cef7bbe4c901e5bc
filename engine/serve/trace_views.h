// A trace's views as HTML sections: the TensorBoard plugin's (step breakdown, GPU summary,
// kernels, memory, modules, recommendations; engine/analysis/tensorboard) and torch's operator
// table, each computed by the engine and rendered as a table.
#pragma once

#include <string>

#include "engine/analysis/analysis_rows.h"
#include "engine/trace/trace.h"

namespace profsh::serve {

std::string TraceViewsHtml(const Trace& trace);

// One view's rows as a <section class="view" id=ID> with a table (long ones cut, said in a
// note) and the rows' notes.
std::string RowsSectionHtml(const std::string& id, const std::string& title,
                            const AnalysisRows& rows);

}  // namespace profsh::serve
