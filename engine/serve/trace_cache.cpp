#include "engine/serve/trace_cache.h"

#include <sys/stat.h>

#include <chrono>

#include "engine/load/trace_loader.h"
#include "engine/serve/trace_views.h"

namespace profsh::serve {

const std::string& LoadedTrace::ViewsHtml() const {
  std::call_once(views_once_, [&] { views_ = TraceViewsHtml(*trace); });
  return views_;
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
  std::lock_guard lock(entry->loading);
  if (entry->loaded && entry->bytes == st.st_size && entry->modified_ns == modified)
    return entry->loaded;
  auto start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<Trace>> trace = LoadTrace(path);
  if (!trace.ok()) return trace.error();
  auto loaded = std::make_shared<LoadedTrace>();
  loaded->trace = std::move(trace.value());
  loaded->timeline = BuildTimelineIndex(*loaded->trace);
  loaded->load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  entry->loaded = loaded;  // the previous version stays alive for requests still using it
  entry->bytes = st.st_size;
  entry->modified_ns = modified;
  return std::shared_ptr<const LoadedTrace>(loaded);
}

}  // namespace profsh::serve
