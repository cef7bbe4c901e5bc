#include "engine/serve/trace_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "engine/analysis/tensorboard/distributed_workers.h"
#include "engine/load/trace_loader.h"
#include "engine/serve/trace_views.h"
#include "engine/util/large_vector.h"

namespace profsh::serve {

namespace {

uint64_t TimelineIndexBytes(const TimelineIndex& index) {
  uint64_t bytes = index.lanes.capacity() * sizeof(TimelineIndex::Lane);
  for (const TimelineIndex::Lane& lane : index.lanes)
    bytes +=
        lane.events.capacity() * sizeof(uint32_t) + lane.depth.capacity() + lane.label.capacity();
  return bytes;
}

template <typename T>
uint64_t VectorBytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

uint64_t WorkerBytes(const tensorboard::DistributedWorker& w) {
  uint64_t bytes = VectorBytes(w.step_names) + VectorBytes(w.steps) + VectorBytes(w.computation) +
                   VectorBytes(w.communication) + VectorBytes(w.ops);
  for (const std::string& name : w.step_names) bytes += name.capacity();
  for (const tensorboard::CommunicationOp& op : w.ops)
    bytes += op.name.capacity() + VectorBytes(op.kernel_ranges);
  return bytes;
}

// What the views were computed from (the event model and the analyses' tables) is not kept
// beside them; its large columns go back to the system rather than to the block cache
// (large_vector.h), where they would stay resident until the kernel needs the pages.
void DropDerived(const Trace& trace) {
  trace.derived.Clear();
  TrimLargeBlockCache();
}

}  // namespace

const std::string& LoadedTrace::ViewsHtml() const {
  std::call_once(views_once_, [&] {
    views_ = TraceViewsHtml(*trace);
    DropDerived(*trace);
    made_bytes_ += views_.capacity();
  });
  return views_;
}

const tensorboard::DistributedWorker& LoadedTrace::DistributedWorker() const {
  std::call_once(worker_once_, [&] {
    worker_ = tensorboard::DistributedWorkerOf(*trace, "");
    DropDerived(*trace);
    made_bytes_ += WorkerBytes(worker_);
  });
  return worker_;
}

uint64_t LoadedTrace::MemoryBytes() const {
  return trace->MemoryBytes() + index_bytes_ + made_bytes_.load();
}

uint64_t DefaultCacheBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return uint64_t{4} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2;
}

Result<std::shared_ptr<const LoadedTrace>> TraceCache::Get(const std::string& path) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard lock(mutex_);
    auto& slot = entries_[path];
    if (!slot) slot = std::make_shared<Entry>();
    entry = slot;
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return Error{path + ": the file went away"};
  int64_t modified = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  std::lock_guard loading(entry->loading);
  {
    std::lock_guard lock(mutex_);
    if (entry->loaded && entry->file_bytes == st.st_size && entry->modified_ns == modified) {
      entry->last_used = ++clock_;
      return entry->loaded;
    }
  }
  auto start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<Trace>> trace = LoadTrace(path);
  if (!trace.ok()) return trace.error();
  auto loaded = std::make_shared<LoadedTrace>();
  loaded->trace = std::move(trace.value());
  loaded->timeline = BuildTimelineIndex(*loaded->trace);
  loaded->index_bytes_ = TimelineIndexBytes(loaded->timeline);
  loaded->load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<std::shared_ptr<const LoadedTrace>> dropped;
  {
    std::lock_guard lock(mutex_);
    entry->loaded = loaded;  // the previous version stays alive for requests still using it
    entry->file_bytes = st.st_size;
    entry->modified_ns = modified;
    entry->last_used = ++clock_;
    ++loads_;
    dropped = TrimLocked(entry.get());
  }
  Release(std::move(dropped));
  return std::shared_ptr<const LoadedTrace>(loaded);
}

void TraceCache::Trim() {
  std::vector<std::shared_ptr<const LoadedTrace>> dropped;
  {
    std::lock_guard lock(mutex_);
    dropped = TrimLocked(nullptr);
  }
  Release(std::move(dropped));
}

void TraceCache::Release(std::vector<std::shared_ptr<const LoadedTrace>> dropped) {
  if (dropped.empty()) return;
  dropped.clear();  // requests still using one finish on their own reference
  // Columns freed are cached for reuse (large_vector.h); a trace dropped gives them back.
  TrimLargeBlockCache();
}

std::vector<std::shared_ptr<const LoadedTrace>> TraceCache::TrimLocked(const Entry* keep) {
  std::vector<std::shared_ptr<const LoadedTrace>> dropped;
  std::vector<Entry*> kept;
  uint64_t total = 0;
  for (auto& [path, entry] : entries_) {
    if (!entry->loaded) continue;
    kept.push_back(entry.get());
    total += entry->loaded->MemoryBytes();
  }
  if (total <= max_bytes_) return dropped;
  std::sort(kept.begin(), kept.end(),
            [](const Entry* a, const Entry* b) { return a->last_used < b->last_used; });
  // The most recently used entry (the last) stays: its request is using it.
  for (size_t i = 0; i + 1 < kept.size() && total > max_bytes_; ++i) {
    if (kept[i] == keep) continue;
    total -= kept[i]->loaded->MemoryBytes();
    dropped.push_back(std::move(kept[i]->loaded));
    kept[i]->loaded = nullptr;
    kept[i]->file_bytes = kept[i]->modified_ns = -1;
    ++evictions_;
  }
  return dropped;
}

TraceCache::Usage TraceCache::usage() const {
  std::lock_guard lock(mutex_);
  Usage u;
  u.max_bytes = max_bytes_;
  u.loads = loads_;
  u.evictions = evictions_;
  std::vector<std::pair<uint64_t, Kept>> kept;
  for (const auto& [path, entry] : entries_) {
    if (!entry->loaded) continue;
    uint64_t bytes = entry->loaded->MemoryBytes();
    u.bytes += bytes;
    kept.push_back({entry->last_used, Kept{path, bytes}});
  }
  std::sort(kept.begin(), kept.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [used, k] : kept) u.kept.push_back(std::move(k));
  return u;
}

}  // namespace profsh::serve
