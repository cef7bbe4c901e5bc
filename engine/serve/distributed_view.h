// A run's distributed view, as the TensorBoard plugin's: its workers' traces of one span taken
// together (engine/analysis/tensorboard/distributed_summary.h), computed per request from the
// workers the cache keeps loaded.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/analysis/tensorboard/distributed_summary.h"
#include "engine/serve/log_dir.h"
#include "engine/serve/trace_cache.h"

namespace profsh::serve {

// The spans of a run, in numeric order.
std::vector<std::string> SpansOf(const Run& run);

// One worker of the view: its trace file and the trace loaded.
struct RunWorker {
  const TraceFile* file = nullptr;
  std::shared_ptr<const LoadedTrace> loaded;
};

// The workers named by their file (the plugin's worker names), ordered as the plugin orders them.
tensorboard::DistributedSummary RunDistributedSummary(const std::vector<RunWorker>& workers);

// The page: the span's workers (linked to their pages), the other spans, and the view's tables
// (per worker and step; per worker and collective).
std::string DistributedHtml(const Run& run, const std::string& span,
                            const std::vector<RunWorker>& workers,
                            const tensorboard::DistributedSummary& summary);

}  // namespace profsh::serve
