// Owning wrappers of SQLite's connection and statement handles, and the step that fills a
// database with a trace's tables (sqlite_tables.cpp), shared by the exporter and `profsh sql`.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh::sqlite {

class Database {
 public:
  // ":memory:" for an in-memory database; `read_only` for a file someone else wrote.
  static Result<Database> Open(const std::string& path, bool read_only);
  Database(Database&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  Database& operator=(Database&&) = delete;
  Database(const Database&) = delete;
  // Statements the SQL functions keep prepared (sqlite_functions.cpp) end with the connection.
  ~Database() {
    if (db_ == nullptr) return;  // moved from
    while (sqlite3_stmt* left = sqlite3_next_stmt(db_, nullptr)) sqlite3_finalize(left);
    sqlite3_close(db_);
  }

  sqlite3* get() const { return db_; }
  // Runs statements that return no rows; an error names the SQL.
  Status Execute(const std::string& sql) const;
  std::string LastError() const { return sqlite3_errmsg(db_); }

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

// A prepared INSERT reused for every row: Bind* by column (from 1), then Insert().
class Inserter {
 public:
  Inserter(const Database& db, const std::string& sql);
  ~Inserter() { sqlite3_finalize(stmt_); }
  Inserter(const Inserter&) = delete;
  Inserter& operator=(const Inserter&) = delete;

  void Int(int column, int64_t v) { sqlite3_bind_int64(stmt_, column, v); }
  void Real(int column, double v) { sqlite3_bind_double(stmt_, column, v); }
  void Null(int column) { sqlite3_bind_null(stmt_, column); }
  // The text must outlive Insert() (SQLite does not copy it).
  void Text(int column, std::string_view v) {
    sqlite3_bind_text(stmt_, column, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
  }
  void OptionalInt(int column, bool present, int64_t v) {
    if (present) {
      Int(column, v);
    } else {
      Null(column);
    }
  }
  // Steps and resets; the first failure is kept for status().
  void Insert();
  Status status() const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
  std::string error_;
};

// Creates and fills the trace's tables (Perfetto's names and profsh's own) in `db`.
Status WriteTraceTables(const Trace& trace, const Database& db);

}  // namespace profsh::sqlite
