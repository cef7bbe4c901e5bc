#include "repl/job_map_plan.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace profsh::repl {

Result<std::vector<MapTask>> PlanMap(const std::vector<std::string>& traces,
                                     const std::string& out_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec))
    return Error{"-o " + out_dir + " is a file; the summaries go into a folder"};
  fs::create_directories(out_dir, ec);
  if (ec) return Error{"cannot create the folder " + out_dir + ": " + ec.message()};
  fs::path out = fs::absolute(out_dir, ec).lexically_normal();
  // Two maps into one folder at once must not write each other's files.
  const std::string prefix = ".job-map-" + std::to_string(getpid()) + "-";
  std::vector<MapTask> tasks;
  for (size_t k = 0; k < traces.size(); ++k) {
    tasks.push_back({fs::absolute(traces[k], ec).lexically_normal().string(),
                     (out / (prefix + std::to_string(k) + ".partial")).string()});
  }
  return tasks;
}

}  // namespace profsh::repl
