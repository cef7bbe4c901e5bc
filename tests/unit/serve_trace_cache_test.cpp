// profsh serve's trace cache: traces kept between requests, reloaded when their file changes,
// and the least recently used dropped once what is kept exceeds the bound (--cache-mb).
#include "engine/serve/trace_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <utime.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace profsh::serve {
namespace {

struct Folder {
  std::string path;
  Folder() {
    char name[] = "/tmp/profsh_serve_cache_XXXXXX";
    path = mkdtemp(name);
  }
  ~Folder() { std::system(("rm -rf '" + path + "'").c_str()); }
  // A Kineto-shaped trace of `events` nested operator ranges: its size in memory grows with them.
  std::string Write(const std::string& file, int events) {
    std::string json = "{\"traceEvents\": [";
    for (int i = 0; i < events; ++i) {
      char event[200];
      std::snprintf(event, sizeof event,
                    "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op%d\", \"pid\": 1, "
                    "\"tid\": 1, \"ts\": %d, \"dur\": 5}",
                    i ? "," : "", i % 7, i * 10);
      json += event;
    }
    json += "]}";
    const std::string p = path + "/" + file;
    std::ofstream(p) << json;
    return p;
  }
};

std::vector<std::string> KeptNames(const TraceCache& cache, const std::string& folder) {
  std::vector<std::string> names;
  for (const TraceCache::Kept& k : cache.usage().kept)
    names.push_back(k.path.substr(folder.size() + 1));
  return names;
}

TEST(ServeTraceCache, KeepsTracesAndLoadsEachOnce) {
  Folder folder;
  const std::string a = folder.Write("a.pt.trace.json", 2000);
  TraceCache cache(uint64_t{1} << 40);
  auto first = cache.Get(a);
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto second = cache.Get(a);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first.value().get(), second.value().get());
  EXPECT_EQ(cache.usage().loads, 1u);
  EXPECT_EQ(cache.usage().bytes, first.value()->MemoryBytes());
  EXPECT_GE(first.value()->MemoryBytes(), 2000u * EventTable::kBytesPerEvent);
}

// The JSON importer reserves columns for the densest input the file's size allows; the cache
// counts what the events use, not that reserve (shrunk or given back once the trace is complete),
// which over-counted this trace 1.6 times and a Kineto trace of large events up to 3.6 times.
TEST(ServeTraceCache, CountsTheEventsNotTheImportersReserve) {
  Folder folder;
  constexpr size_t kEvents = 300000;
  const std::string a = folder.Write("a.pt.trace.json", kEvents);
  TraceCache cache(uint64_t{1} << 40);
  auto loaded = cache.Get(a);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const EventTable& events = loaded.value()->trace->events;
  ASSERT_EQ(events.size(), kEvents);
  EXPECT_GE(events.MemoryBytes(), kEvents * EventTable::kBytesPerEvent);
  EXPECT_LE(events.MemoryBytes(), kEvents * EventTable::kBytesPerEvent + (size_t{1} << 20));
}

TEST(ServeTraceCache, AChangedFileIsLoadedAgain) {
  Folder folder;
  const std::string a = folder.Write("a.pt.trace.json", 100);
  TraceCache cache(uint64_t{1} << 40);
  auto before = cache.Get(a);
  ASSERT_TRUE(before.ok());
  folder.Write("a.pt.trace.json", 300);
  utimbuf later{time(nullptr) + 10, time(nullptr) + 10};
  utime(a.c_str(), &later);
  auto after = cache.Get(a);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(before.value()->trace->events.size(), 100u);
  EXPECT_EQ(after.value()->trace->events.size(), 300u);
  EXPECT_EQ(cache.usage().loads, 2u);
}

TEST(ServeTraceCache, DropsTheLeastRecentlyUsedPastTheBound) {
  Folder folder;
  const std::string a = folder.Write("a.pt.trace.json", 3000);
  const std::string b = folder.Write("b.pt.trace.json", 3000);
  const std::string c = folder.Write("c.pt.trace.json", 3000);
  uint64_t one = 0;
  {
    TraceCache unbounded(uint64_t{1} << 40);
    one = unbounded.Get(a).value()->MemoryBytes();
  }
  // Room for two of the three.
  TraceCache cache(2 * one + one / 2);
  auto held_a = cache.Get(a);
  ASSERT_TRUE(held_a.ok());
  ASSERT_TRUE(cache.Get(b).ok());
  EXPECT_EQ(KeptNames(cache, folder.path),
            (std::vector<std::string>{"b.pt.trace.json", "a.pt.trace.json"}));
  ASSERT_TRUE(cache.Get(c).ok());
  EXPECT_EQ(KeptNames(cache, folder.path),
            (std::vector<std::string>{"c.pt.trace.json", "b.pt.trace.json"}));
  EXPECT_EQ(cache.usage().evictions, 1u);
  EXPECT_LE(cache.usage().bytes, cache.usage().max_bytes);
  // A request still holding the dropped trace goes on using it.
  EXPECT_EQ(held_a.value()->trace->events.size(), 3000u);
  // b used again: c is now the least recently used, and goes when a comes back.
  ASSERT_TRUE(cache.Get(b).ok());
  ASSERT_TRUE(cache.Get(a).ok());
  EXPECT_EQ(KeptNames(cache, folder.path),
            (std::vector<std::string>{"a.pt.trace.json", "b.pt.trace.json"}));
  EXPECT_EQ(cache.usage().loads, 4u);  // a loaded again after it was dropped
  EXPECT_EQ(cache.usage().evictions, 2u);
}

TEST(ServeTraceCache, ATraceLargerThanTheBoundStillOpens) {
  Folder folder;
  const std::string a = folder.Write("a.pt.trace.json", 500);
  const std::string b = folder.Write("b.pt.trace.json", 500);
  TraceCache cache(1);
  ASSERT_TRUE(cache.Get(a).ok());
  EXPECT_EQ(KeptNames(cache, folder.path), (std::vector<std::string>{"a.pt.trace.json"}));
  ASSERT_TRUE(cache.Get(b).ok());
  EXPECT_EQ(KeptNames(cache, folder.path), (std::vector<std::string>{"b.pt.trace.json"}));
}

TEST(ServeTraceCache, ViewsMadeCountAndTheirModelIsNotKept) {
  Folder folder;
  const std::string a = folder.Write("a.pt.trace.json", 2000);
  const std::string b = folder.Write("b.pt.trace.json", 2000);
  TraceCache cache(uint64_t{1} << 40);
  auto loaded = cache.Get(a);
  ASSERT_TRUE(loaded.ok());
  const uint64_t before = loaded.value()->MemoryBytes();
  const std::string& views = loaded.value()->ViewsHtml();
  EXPECT_NE(views.find("aten::op3"), std::string::npos);
  EXPECT_GE(loaded.value()->MemoryBytes(), before + views.size());
  // The event model the views were computed from is built again when next asked for: it was
  // dropped, not kept beside the views.
  const uint64_t builds = loaded.value()->trace->derived.builds();
  loaded.value()->DistributedWorker();
  EXPECT_GT(loaded.value()->trace->derived.builds(), builds);
  // Trim() weighs the views: with a bound between one bare trace and one with views, the trace
  // whose views were made goes once another is used after it.
  TraceCache bounded(before + views.size() / 2);
  auto with_views = bounded.Get(a);
  with_views.value()->ViewsHtml();
  ASSERT_TRUE(bounded.Get(b).ok());
  EXPECT_EQ(KeptNames(bounded, folder.path), (std::vector<std::string>{"b.pt.trace.json"}));
}

}  // namespace
}  // namespace profsh::serve
