// Traces kept loaded between requests: one entry per file, loaded by the first request that
// needs it (others for the same file wait for that load, not a second one) and loaded again
// when the file's size or modification time changes (a job still writing it).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "engine/serve/timeline_lod.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh::serve {

struct LoadedTrace {
  std::unique_ptr<Trace> trace;
  TimelineIndex timeline;
  double load_seconds = 0;
  // The views' HTML (trace_views.h), made by the first page that shows them.
  const std::string& ViewsHtml() const;

 private:
  mutable std::once_flag views_once_;
  mutable std::string views_;
};

class TraceCache {
 public:
  // `path` is canonical (ResolveUnder).
  Result<std::shared_ptr<const LoadedTrace>> Get(const std::string& path);

 private:
  struct Entry {
    std::mutex loading;
    int64_t bytes = -1, modified_ns = -1;
    std::shared_ptr<const LoadedTrace> loaded;
  };
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;
};

}  // namespace profsh::serve
