#include "repl/job_map_plan.h"

#include <filesystem>
#include <map>
#include <system_error>

namespace profsh::repl {

namespace {

bool DropSuffix(std::string* name, const std::string& suffix) {
  if (name->size() <= suffix.size() ||
      name->compare(name->size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  name->resize(name->size() - suffix.size());
  return true;
}

}  // namespace

std::string SummaryName(const std::string& trace) {
  std::string name = std::filesystem::path(trace).filename().string();
  DropSuffix(&name, ".gz");
  DropSuffix(&name, ".json");
  return name + ".sqlite";
}

Result<std::vector<MapTask>> PlanMap(const std::vector<std::string>& traces,
                                     const std::string& out_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec))
    return Error{"-o " + out_dir + " is a file; the summaries go into a folder"};
  fs::create_directories(out_dir, ec);
  if (ec) return Error{"cannot create the folder " + out_dir + ": " + ec.message()};
  fs::path out = fs::absolute(out_dir, ec);

  std::vector<MapTask> tasks;
  std::map<std::string, std::string> trace_of_summary;
  for (const std::string& trace : traces) {
    std::string name = SummaryName(trace);
    auto [it, fresh] = trace_of_summary.emplace(name, trace);
    if (!fresh) {
      return Error{"the traces " + it->second + " and " + trace + " would both be summarized to " +
                   (out / name).string() + " (summaries are named after their trace's file)"};
    }
    tasks.push_back({fs::absolute(trace, ec).lexically_normal().string(), (out / name).string()});
  }
  return tasks;
}

}  // namespace profsh::repl
