// SQLite handles, queries whose rows come back as AnalysisRows (`profsh sql`), and the "sqlite"
// exporter: the database is built in memory and its bytes go through AtomicWriter, so a failed
// export leaves no half-written file.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "engine/exporters/exporter.h"
#include "engine/exporters/sqlite_database.h"
#include "engine/exporters/sqlite_functions.h"
#include "engine/exporters/sqlite_handle.h"
#include "engine/exporters/sqlite_modules.h"

namespace profsh {

namespace sqlite {

Result<Database> Database::Open(const std::string& path, bool read_only) {
  sqlite3* db = nullptr;
  // One thread uses a connection at a time: SQLite's own locking would only cost time.
  const int flags =
      (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
      SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Error{path + ": cannot open as a SQLite database: " + message};
  }
  return Database(db);
}

Status Database::Execute(const std::string& sql) const {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK) return Status::Ok();
  std::string text = message != nullptr ? message : LastError();
  sqlite3_free(message);
  return Error{"SQLite: " + text + " (in: " + sql + ")"};
}

Inserter::Inserter(const Database& db, const std::string& sql) : db_(db.get()), sql_(sql) {
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
    error_ = sqlite3_errmsg(db_);
}

void Inserter::Insert() {
  if (stmt_ == nullptr) return;
  if (sqlite3_step(stmt_) != SQLITE_DONE && error_.empty()) error_ = sqlite3_errmsg(db_);
  sqlite3_reset(stmt_);
}

Status Inserter::status() const {
  if (error_.empty()) return Status::Ok();
  return Error{"SQLite: " + error_ + " (in: " + sql_ + ")"};
}

}  // namespace sqlite

namespace {

bool OnlySpaceOrSemicolons(const char* p) {
  for (; *p != '\0'; ++p)
    if (*p != ';' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') return false;
  return true;
}

Result<AnalysisRows> Query(const sqlite::Database& db, const std::string& query) {
  auto fail = [&](const std::string& message) {
    return Error{"SQLite: " + message + "\n  in: " + query};
  };
  Result<std::string> statement = sqlite::TakeModuleIncludes(query);
  if (!statement.ok()) return fail(statement.error().message);
  const std::string& sql = statement.value();
  // INCLUDE alone: the modules are there already, and there are no rows.
  if (OnlySpaceOrSemicolons(sql.c_str())) return AnalysisRows{};
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(db.get(), sql.c_str(), static_cast<int>(sql.size()), &raw, &tail) !=
      SQLITE_OK)
    return fail(db.LastError());
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw, sqlite3_finalize);
  if (stmt == nullptr) return fail("no statement given");
  if (tail != nullptr && !OnlySpaceOrSemicolons(tail)) return fail("one statement at a time");
  AnalysisRows rows;
  const int columns = sqlite3_column_count(raw);
  // Rows reach Lua as tables keyed by column name: a name given twice (a join's two `name`s)
  // becomes `name_2`, and so on, so that no column hides another.
  for (int c = 0; c < columns; ++c) {
    const char* given = sqlite3_column_name(raw, c);
    std::string name = given != nullptr ? given : "column_" + std::to_string(c + 1);
    const std::string base = name;
    for (int n = 2; std::find(rows.columns.begin(), rows.columns.end(), name) != rows.columns.end();
         ++n)
      name = base + "_" + std::to_string(n);
    rows.columns.push_back(std::move(name));
  }
  int rc;
  std::vector<Cell> row;
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    row.clear();
    for (int c = 0; c < columns; ++c) {
      switch (sqlite3_column_type(raw, c)) {
        case SQLITE_INTEGER:
          row.push_back(Cell::Int(sqlite3_column_int64(raw, c)));
          break;
        case SQLITE_FLOAT:
          row.push_back(Cell::Double(sqlite3_column_double(raw, c)));
          break;
        case SQLITE_TEXT:
          row.push_back(Cell::Text(reinterpret_cast<const char*>(sqlite3_column_text(raw, c))));
          break;
        case SQLITE_BLOB:
          row.push_back(
              Cell::Text("<blob of " + std::to_string(sqlite3_column_bytes(raw, c)) + " bytes>"));
          break;
        default:
          row.push_back(Cell::Empty());
      }
    }
    rows.rows.push_back(row);
  }
  if (rc != SQLITE_DONE) return fail(db.LastError());
  return rows;
}

class SqliteExporter final : public Exporter {
 public:
  std::string_view name() const override { return "sqlite"; }

  Status Write(const Trace& t, const ExportOptions&, AtomicWriter& out) const override {
    auto db = sqlite::Database::Open(":memory:", false);
    if (!db.ok()) return db.error();
    if (Status s = sqlite::WriteTraceTables(t, db.value()); !s.ok()) return s;
    sqlite3_int64 size = 0;
    unsigned char* bytes = sqlite3_serialize(db.value().get(), "main", &size, 0);
    if (bytes == nullptr) return Error{"SQLite: could not serialize the database (out of memory?)"};
    out.Write(reinterpret_cast<const char*>(bytes), static_cast<size_t>(size));
    sqlite3_free(bytes);
    return Status::Ok();
  }
};

std::atomic<int64_t> build_count{0};

// The trace's own tables are read-only to queries, which may still make TEMP tables and views
// (as Perfetto users make their own tables and views in a session).
int OnlyTempWrites(void*, int action, const char*, const char*, const char* database, const char*) {
  if (sqlite::DeclaringTableFunction()) return SQLITE_OK;
  switch (action) {
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
    case SQLITE_CREATE_TABLE:
    case SQLITE_CREATE_VIEW:
    case SQLITE_CREATE_INDEX:
    case SQLITE_CREATE_TRIGGER:
    case SQLITE_DROP_TABLE:
    case SQLITE_DROP_VIEW:
    case SQLITE_DROP_INDEX:
    case SQLITE_DROP_TRIGGER:
    case SQLITE_ALTER_TABLE:
    case SQLITE_CREATE_VTABLE:
    case SQLITE_DROP_VTABLE:
      return database != nullptr && std::strcmp(database, "main") == 0 ? SQLITE_DENY : SQLITE_OK;
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
      return SQLITE_DENY;
    default:
      return SQLITE_OK;
  }
}

}  // namespace

TraceDatabase::TraceDatabase(std::unique_ptr<sqlite::Database> db) : db_(std::move(db)) {}
TraceDatabase::~TraceDatabase() = default;

Result<std::shared_ptr<TraceDatabase>> TraceDatabase::Build(const Trace& trace) {
  auto db = sqlite::Database::Open(":memory:", false);
  if (!db.ok()) return db.error();
  if (Status s = sqlite::WriteTraceTables(trace, db.value()); !s.ok()) return Error{s.message()};
  if (Status s = sqlite::RegisterPerfettoFunctions(db.value().get()); !s.ok())
    return Error{s.message()};
  sqlite3_set_authorizer(db.value().get(), OnlyTempWrites, nullptr);
  ++build_count;
  return std::shared_ptr<TraceDatabase>(
      new TraceDatabase(std::make_unique<sqlite::Database>(std::move(db.value()))));
}

Result<AnalysisRows> TraceDatabase::Query(const std::string& sql) const {
  return profsh::Query(*db_, sql);
}

int64_t TraceDatabase::BuildCount() {
  return build_count.load();
}

Result<AnalysisRows> QueryTrace(const Trace& trace, const std::string& sql) {
  auto db = TraceDatabase::Build(trace);
  if (!db.ok()) return db.error();
  return db.value()->Query(sql);
}

Result<AnalysisRows> QueryDatabaseFile(const std::string& path, const std::string& sql) {
  auto db = sqlite::Database::Open(path, true);
  if (!db.ok()) return db.error();
  if (Status s = sqlite::RegisterPerfettoFunctions(db.value().get()); !s.ok())
    return Error{s.message()};
  return Query(db.value(), sql);
}

bool IsSqliteFile(const std::string& path) {
  static constexpr char kHeader[] = "SQLite format 3";  // and its terminating NUL: 16 bytes
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char head[sizeof(kHeader)] = {};
  const size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  return n == sizeof(head) && std::memcmp(head, kHeader, sizeof(head)) == 0;
}

std::unique_ptr<Exporter> MakeSqliteExporter() {
  return std::make_unique<SqliteExporter>();
}

}  // namespace profsh
