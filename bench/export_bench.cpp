// Prints the Chrome JSON export throughput and how much faster profsh's own format loads than
// the JSON it came from.
//
//   export_bench TRACE.json [RUNS=5] [OUT_DIR=/tmp]
//
// All runs are in one process, one after the other, so the figures compare like with like.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/exporters/exporter.h"
#include "engine/load/trace_loader.h"

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

size_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
}

template <typename F>
double Time(F&& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TRACE.json [RUNS] [OUT_DIR]\n", argv[0]);
    return 2;
  }
  std::string input = argv[1];
  int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  std::string dir = argc > 3 ? argv[3] : "/tmp";
  std::string chrome = dir + "/profsh_export_bench." + std::to_string(getpid()) + ".json";
  std::string binary = dir + "/profsh_export_bench." + std::to_string(getpid()) + ".profsh";

  auto loaded = profsh::LoadTrace(input);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
    return 1;
  }
  const profsh::Trace& trace = *loaded.value();
  std::vector<double> export_s, json_load_s, save_s, binary_load_s;
  for (int r = 0; r < runs; ++r) {
    export_s.push_back(Time([&] {
      profsh::Status s = profsh::ExportTrace(trace, "chrome", chrome);
      if (!s.ok()) std::fprintf(stderr, "%s\n", s.message().c_str());
    }));
    save_s.push_back(Time([&] { profsh::ExportTrace(trace, "profsh", binary); }));
    json_load_s.push_back(Time([&] { auto t = profsh::LoadTrace(chrome); }));
    binary_load_s.push_back(Time([&] { auto t = profsh::LoadTrace(binary); }));
  }
  size_t chrome_bytes = FileSize(chrome), binary_bytes = FileSize(binary);
  double events = static_cast<double>(trace.events.size());
  std::printf(
      "trace: %.0f events; Chrome JSON %.1f MB (%.0f B/event), profsh format %.1f MB (%.1f "
      "B/event)\n",
      events, chrome_bytes / 1e6, chrome_bytes / events, binary_bytes / 1e6, binary_bytes / events);
  std::printf("export_chrome_trace: median %.3f s = %.0f MB/s (written, fsynced and renamed)\n",
              Median(export_s), chrome_bytes / 1e6 / Median(export_s));
  std::printf("save (profsh format): median %.3f s\n", Median(save_s));
  std::printf("load: JSON median %.3f s, profsh format median %.3f s: %.1fx faster (%d runs)\n",
              Median(json_load_s), Median(binary_load_s),
              Median(json_load_s) / Median(binary_load_s), runs);
  unlink(chrome.c_str());
  unlink(binary.c_str());
  return 0;
}
