#include "repl/job_map_outputs.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "engine/exporters/sqlite_handle.h"
#include "engine/summary/summarize.h"

namespace profsh::repl {

Result<int32_t> SummaryFileRank(const std::string& path) {
  auto db = sqlite::Database::Open(path, /*read_only=*/true);
  if (!db.ok()) return db.error();
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db->get(), "SELECT rank FROM rank", -1, &stmt, nullptr) != SQLITE_OK)
    return Error{path + ": not a rank summary (" + db->LastError() + ")"};
  Result<int32_t> rank = Error{path + ": its rank table has no row"};
  if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_type(stmt, 0) == SQLITE_INTEGER)
    rank = static_cast<int32_t>(sqlite3_column_int64(stmt, 0));
  sqlite3_finalize(stmt);
  return rank;
}

Result<std::vector<std::string>> SummaryOutputs::Place(size_t index) {
  namespace fs = std::filesystem;
  const MapTask& task = tasks_[index];
  std::error_code ec;
  // A trace of one rank left a file; one whose processes are several ranks (a profsh run of a
  // job), a folder of rank-R.summary.sqlite (profsh summarize TRACE -o OUT makes OUT a folder).
  std::vector<std::string> files;
  const bool folder = fs::is_directory(task.staging, ec);
  if (folder) {
    // increment(ec), not ++: a folder that cannot be read is this task's failure, not an exception.
    for (fs::directory_iterator it(task.staging, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.ends_with(".summary.sqlite") && !name.starts_with("."))
        files.push_back(it->path().string());
    }
    std::sort(files.begin(), files.end());
    if (ec || files.empty()) {
      fs::remove_all(task.staging, ec);
      return Error{"summarize left a folder without rank summaries (" + task.staging + ")"};
    }
  } else {
    files.push_back(task.staging);
  }
  std::vector<int32_t> ranks;
  for (const std::string& file : files) {
    auto rank = SummaryFileRank(file);
    if (!rank.ok()) {
      fs::remove_all(task.staging, ec);
      return Error{"its summary cannot be read back: " + rank.error().message};
    }
    // Ranks of one trace are told apart by summarize; those of two traces are checked here.
    if (auto it = task_of_rank_.find(rank.value()); it != task_of_rank_.end()) {
      fs::remove_all(task.staging, ec);
      return Error{"rank " + std::to_string(rank.value()) + " twice: " + tasks_[it->second].trace +
                   " and " + task.trace};
    }
    ranks.push_back(rank.value());
  }
  // All of the task's ranks are placed, or none: a rename that fails takes back the ones before
  // it, and the ranks are registered only once every file is in place.
  std::vector<std::string> placed;
  const fs::path out_dir = fs::path(task.staging).parent_path();
  for (size_t k = 0; k < files.size(); ++k) {
    const std::string final_path = (out_dir / SummaryFileName(ranks[k])).string();
    fs::rename(files[k], final_path, ec);
    if (ec) {
      const std::string why = ec.message();
      for (const std::string& done : placed) fs::remove(done, ec);
      fs::remove_all(task.staging, ec);
      return Error{"cannot name its summary " + final_path + ": " + why};
    }
    placed.push_back(final_path);
  }
  for (int32_t rank : ranks) task_of_rank_.emplace(rank, index);
  if (folder) fs::remove_all(task.staging, ec);
  return placed;
}

void SummaryOutputs::RemoveStaging() const {
  std::error_code ec;
  for (const MapTask& task : tasks_) std::filesystem::remove_all(task.staging, ec);
}

}  // namespace profsh::repl
