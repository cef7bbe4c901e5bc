// Traces kept loaded between requests: one entry per file, loaded by the first request that
// needs it (others for the same file wait for that load, not a second one) and loaded again
// when the file's size or modification time changes (a job still writing it). What the entries
// keep is bounded (profsh serve --cache-mb): past the bound, the traces used least recently are
// dropped, to be loaded again when next asked for. The trace in use by the latest request is
// kept whatever its size, so that one trace larger than the bound still opens.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/analysis/tensorboard/distributed_summary.h"
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
  // What the distributed view needs of this trace as one worker (its name left empty), made by
  // the first distributed page that shows it.
  const tensorboard::DistributedWorker& DistributedWorker() const;
  // What this entry keeps: the trace's columns and strings, the timeline index, and the views
  // made so far. What the analyses derived to make the views (the event model) is dropped once
  // they are made, so it is not kept.
  uint64_t MemoryBytes() const;

 private:
  mutable std::once_flag views_once_, worker_once_;
  mutable std::string views_;
  mutable tensorboard::DistributedWorker worker_;
  mutable std::atomic<uint64_t> made_bytes_{0};
  uint64_t index_bytes_ = 0;
  friend class TraceCache;
};

// Half the machine's memory: room for a few large traces beside the browser and the job.
uint64_t DefaultCacheBytes();

class TraceCache {
 public:
  explicit TraceCache(uint64_t max_bytes = DefaultCacheBytes()) : max_bytes_(max_bytes) {}
  // `path` is canonical (ResolveUnder).
  Result<std::shared_ptr<const LoadedTrace>> Get(const std::string& path);
  // Drops the least recently used traces while what is kept exceeds the bound (the views a
  // page made after Get count from then on).
  void Trim();

  struct Kept {
    std::string path;
    uint64_t bytes = 0;
  };
  struct Usage {
    uint64_t max_bytes = 0, bytes = 0;
    uint64_t loads = 0, evictions = 0;
    std::vector<Kept> kept;  // most recently used first
  };
  Usage usage() const;

 private:
  struct Entry {
    std::mutex loading;  // one load of a file at a time
    // Under the cache's mutex_:
    int64_t file_bytes = -1, modified_ns = -1;
    std::shared_ptr<const LoadedTrace> loaded;
    uint64_t last_used = 0;
  };
  // Takes the traces to drop out of their entries; Release() drops them outside the lock.
  std::vector<std::shared_ptr<const LoadedTrace>> TrimLocked(const Entry* keep);
  static void Release(std::vector<std::shared_ptr<const LoadedTrace>> dropped);

  const uint64_t max_bytes_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;
  uint64_t clock_ = 0, loads_ = 0, evictions_ = 0;
};

}  // namespace profsh::serve
