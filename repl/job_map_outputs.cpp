#include "repl/job_map_outputs.h"

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

Result<std::string> SummaryOutputs::Place(size_t index) {
  const MapTask& task = tasks_[index];
  std::error_code ec;
  auto rank = SummaryFileRank(task.staging);
  if (!rank.ok()) {
    std::filesystem::remove(task.staging, ec);
    return Error{"its summary cannot be read back: " + rank.error().message};
  }
  auto [it, fresh] = task_of_rank_.emplace(rank.value(), index);
  if (!fresh) {
    std::filesystem::remove(task.staging, ec);
    return Error{"rank " + std::to_string(rank.value()) + " twice: " + tasks_[it->second].trace +
                 " and " + task.trace};
  }
  std::string final_path =
      (std::filesystem::path(task.staging).parent_path() / SummaryFileName(rank.value())).string();
  std::filesystem::rename(task.staging, final_path, ec);
  if (ec) return Error{"cannot name its summary " + final_path + ": " + ec.message()};
  return final_path;
}

void SummaryOutputs::RemoveStaging() const {
  std::error_code ec;
  for (const MapTask& task : tasks_) std::filesystem::remove(task.staging, ec);
}

}  // namespace profsh::repl
