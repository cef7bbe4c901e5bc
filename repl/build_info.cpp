#include "repl/build_info.h"

#include <cuda.h>
#include <cupti_version.h>
#include <elfutils/libdwfl.h>
#include <gnu/libc-version.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <zlib.h>

#include <string>

#include "bindings/interpreter.h"
#include "engine/recording/launcher.h"
#include "engine/report/chart_library.h"

#ifndef PROFSH_VERSION
#define PROFSH_VERSION "0.0.0"
#endif

namespace profsh::repl {

extern const char* const kBuildCommit;  // build_commit.cpp, written by cmake/GitCommit.cmake

namespace {

std::string CudaRelease(int version) {  // CUDA_VERSION 13000 -> "13.0"
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Where the collector is and which PyTorch operator source a workload gets.
std::string RuntimeFiles() {
  auto collector = FindCollector();
  if (!collector.ok()) return "collector:        not found: " + collector.error().message + "\n";
  const std::string& path = collector.value();
  const std::string dir = path.substr(0, path.find_last_of('/'));
  std::string out = "collector:        " + path + "\n";
  out += "torch operators:  ";
  if (Exists(dir + "/torch_plugin_src")) {
    out +=
        "built at first use against the workload's torch when a C++ compiler is present\n"
        "                  (sources: " +
        dir + "/torch_plugin_src), else torch.profiler\n";
  } else {
    out += "torch.profiler only (no plugin sources in " + dir + ")\n";
  }
  if (Exists(dir + "/libprofsh_torch.so"))
    out += "                  prebuilt for the build machine's torch: " + dir +
           "/libprofsh_torch.so\n";
  return out;
}

}  // namespace

std::string BuildDescription() {
  const char* linking = PROFSH_PORTABLE ? "linked statically" : "shared libraries";
  std::string out = std::string("profsh ") + PROFSH_VERSION + " (commit " + kBuildCommit + ")\n";
  out += std::string("built with:       g++ ") + __VERSION__ + ", glibc " +
         std::to_string(__GLIBC__) + "." + std::to_string(__GLIBC_MINOR__) +
         " (needs that glibc or newer; running " + gnu_get_libc_version() + ")\n";
  out += std::string("libraries:        ") + lua::LuaRelease() + ", SQLite " +
         sqlite3_libversion() + ", zlib " + zlibVersion() + ", elfutils " + dwfl_version(nullptr) +
         ", C++ runtime (" + linking + ")\n";
  out += "CUDA headers:     " + CudaRelease(CUDA_VERSION) + " (CUPTI API " +
         std::to_string(CUPTI_API_VERSION) + "), for the collector; no CUDA library is linked\n";
  out += "report charts:    Apache ECharts " + std::string(report::ChartLibraryVersion()) +
         " (embedded)\n";
  return out + RuntimeFiles();
}

}  // namespace profsh::repl
