// The HTML profsh serve sends: an index, a trace's page and the timeline page. Plain functions
// of what the engine computed; no script library (the timeline's canvas code is ours, inline).
#pragma once

#include <string>
#include <vector>

#include "engine/serve/log_dir.h"
#include "engine/serve/trace_cache.h"

namespace profsh::serve {

std::string IndexHtml(const std::string& root, const std::vector<Run>& runs);
std::string TraceHtml(const std::string& relative, const LoadedTrace& loaded);
std::string TimelineHtml(const std::string& relative, const LoadedTrace& loaded);

}  // namespace profsh::serve
