// A trace's views as HTML sections: the TensorBoard plugin's (step breakdown, GPU summary,
// kernels, memory, modules, recommendations; engine/analysis/tensorboard) and torch's operator
// table, each computed by the engine and rendered as a table.
#pragma once

#include <string>

#include "engine/trace/trace.h"

namespace profsh::serve {

std::string TraceViewsHtml(const Trace& trace);

}  // namespace profsh::serve
