// The HTML profsh serve sends: an index, a trace's page and the timeline page. Plain functions
// of what the engine computed; no script library (the timeline's canvas code is ours, inline).
#pragma once

#include <string>
#include <vector>

#include "engine/serve/log_dir.h"
#include "engine/serve/trace_cache.h"

namespace profsh::serve {

// Every page's start: head, style and the header bar titled `title`; the page then closes
// "</main></body></html>".
std::string PageHead(const std::string& title);
// The link to a run's distributed view (of one span; "" for the latest).
std::string DistributedLink(const std::string& run, const std::string& span);

std::string IndexHtml(const std::string& root, const std::vector<Run>& runs);
// `run`: the run the trace belongs to (its distributed view is linked).
std::string TraceHtml(const std::string& relative, const std::string& run,
                      const LoadedTrace& loaded);
std::string TimelineHtml(const std::string& relative, const LoadedTrace& loaded);

}  // namespace profsh::serve
