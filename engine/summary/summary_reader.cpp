#include "engine/summary/summary_reader.h"

#include <sqlite3.h>

#include <set>

#include "engine/exporters/sqlite_handle.h"
#include "engine/summary/summary_schema.h"

namespace profsh {

namespace {

// One SELECT of a table's declared columns, row by row; an error names the file and table.
class TableReader {
 public:
  // `clause`: what follows the table's name in the SELECT (a WHERE and an ORDER BY).
  TableReader(const sqlite::Database& db, const std::string& path, const SummaryTable& table,
              const std::string& clause = "")
      : db_(db.get()), path_(path), table_(table.name) {
    std::string sql = "SELECT ";
    for (size_t c = 0; c < table.columns.size(); ++c) {
      if (c > 0) sql += ", ";
      sql += '"' + std::string(table.columns[c].name) + '"';
    }
    sql += " FROM " + table_ + clause;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      error_ = sqlite3_errmsg(db_);
  }
  ~TableReader() { sqlite3_finalize(stmt_); }
  TableReader(const TableReader&) = delete;
  TableReader& operator=(const TableReader&) = delete;

  bool Next() {
    if (!error_.empty()) return false;
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) {
      ++row_;
      return true;
    }
    if (rc != SQLITE_DONE) error_ = sqlite3_errmsg(db_);
    return false;
  }
  bool Null(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
  // An integer column: a value of another kind is an error (kept for status()).
  int64_t Int(int c, const char* column) {
    if (sqlite3_column_type(stmt_, c) != SQLITE_INTEGER) Bad(column, "an integer");
    return sqlite3_column_int64(stmt_, c);
  }
  std::optional<int64_t> OptionalInt(int c, const char* column) {
    if (Null(c)) return std::nullopt;
    return Int(c, column);
  }
  double Real(int c, const char* column) {
    const int type = sqlite3_column_type(stmt_, c);
    if (type != SQLITE_FLOAT && type != SQLITE_INTEGER) Bad(column, "a number");
    return sqlite3_column_double(stmt_, c);
  }
  std::string Text(int c, const char* column) {
    if (sqlite3_column_type(stmt_, c) != SQLITE_TEXT) Bad(column, "text");
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, c));
    return std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, c)));
  }
  // A cell of its own kind (analysis_cells.value).
  Cell Any(int c) const {
    switch (sqlite3_column_type(stmt_, c)) {
      case SQLITE_INTEGER:
        return Cell::Int(sqlite3_column_int64(stmt_, c));
      case SQLITE_FLOAT:
        return Cell::Double(sqlite3_column_double(stmt_, c));
      case SQLITE_TEXT:
        return Cell::Text(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt_, c)),
                                      static_cast<size_t>(sqlite3_column_bytes(stmt_, c))));
      default:
        return Cell::Empty();
    }
  }
  Status status() const {
    if (error_.empty()) return Status::Ok();
    return Error{path_ + ": table " + table_ + ": " + error_};
  }
  void Fail(const std::string& why) {
    if (error_.empty()) error_ = "row " + std::to_string(row_) + ": " + why;
  }

 private:
  void Bad(const char* column, const char* expected) {
    Fail("column " + std::string(column) + " is not " + expected);
  }
  sqlite3* db_;
  std::string path_, table_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string error_;
  int64_t row_ = 0;
};

// The columns of every table the file has.
Result<std::map<std::string, std::set<std::string>>> TablesOf(const sqlite::Database& db,
                                                              const std::string& path) {
  std::map<std::string, std::set<std::string>> tables;
  sqlite3_stmt* stmt = nullptr;
  const char* sql =
      "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p "
      "WHERE m.type = 'table'";
  if (sqlite3_prepare_v2(db.get(), sql, -1, &stmt, nullptr) != SQLITE_OK)
    return Error{path + ": not a readable SQLite file: " + db.LastError()};
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    tables[reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))].insert(
        reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)));
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) return Error{path + ": not a readable SQLite file: " + db.LastError()};
  return tables;
}

CollectiveSource SourceNamed(const std::string& name, bool* known) {
  for (CollectiveSource s : {CollectiveSource::kDeviceKernel, CollectiveSource::kParamComms,
                             CollectiveSource::kHostOp, CollectiveSource::kDispatcherOp}) {
    if (name == CollectiveSourceName(s)) {
      *known = true;
      return s;
    }
  }
  *known = false;
  return CollectiveSource::kNone;
}

Status ReadMeta(const sqlite::Database& db, const std::string& path) {
  TableReader t(db, path, *FindSummaryTable("meta"));
  std::optional<int64_t> version;
  while (t.Next()) {
    if (t.Text(0, "key") == "schema_version") version = t.Int(1, "value");
  }
  if (Status s = t.status(); !s.ok()) return s;
  if (!version) return Error{path + ": table meta has no schema_version: not a profsh summary"};
  if (*version != kSummarySchemaVersion) {
    return Error{path + ": summary schema version " + std::to_string(*version) +
                 ", this profsh reads " + std::to_string(kSummarySchemaVersion) +
                 ": run `profsh summarize` of this profsh on the rank's trace again"};
  }
  return Status::Ok();
}

Status ReadRank(const sqlite::Database& db, const std::string& path, RankSummary& s) {
  TableReader t(db, path, *FindSummaryTable("rank"));
  size_t rows = 0;
  while (t.Next()) {
    if (++rows > 1) break;
    const int64_t rank = t.Int(0, "rank");
    if (rank < 0 || rank > INT32_MAX) t.Fail("rank " + std::to_string(rank) + " is out of range");
    s.options.rank = static_cast<int32_t>(rank);
    s.options.rank_from = t.Text(1, "rank_from");
    s.options.path = t.Text(2, "path");
    s.format = t.Text(3, "format");
    s.events = static_cast<size_t>(t.Int(4, "events"));
    s.origin_ns = t.Int(5, "origin_ns");
    s.has_origin = t.Int(6, "has_origin") != 0;
    s.first_event_ns = t.OptionalInt(7, "first_event_ns");
    const auto first_step = t.OptionalInt(8, "first_step");
    const auto first_step_ns = t.OptionalInt(9, "first_step_ns");
    if (first_step && first_step_ns) s.first_step = std::make_pair(*first_step, *first_step_ns);
    if (!t.Null(10)) s.distributed_info = t.Text(10, "distributed_info");
  }
  if (Status st = t.status(); !st.ok()) return st;
  if (rows != 1)
    return Error{path + ": table rank has " + std::to_string(rows) + " rows, one expected"};
  return Status::Ok();
}

Status ReadMetadata(const sqlite::Database& db, const std::string& path, RankSummary& s) {
  TableReader t(db, path, *FindSummaryTable("trace_metadata"));
  while (t.Next()) s.metadata.emplace_back(t.Text(0, "key"), t.Text(1, "json"));
  return t.status();
}

Status ReadSteps(const sqlite::Database& db, const std::string& path, RankSummary& s) {
  TableReader t(db, path, *FindSummaryTable("steps"));
  while (t.Next()) {
    SummaryStep step{t.Int(0, "step"), t.Int(1, "start_ns"), t.Int(2, "end_ns"),
                     t.Int(3, "operators"), t.Int(4, "kernels")};
    if (step.end_ns < step.start_ns) t.Fail("end_ns before start_ns");
    s.steps.push_back(step);
  }
  std::sort(s.steps.begin(), s.steps.end(),
            [](const SummaryStep& a, const SummaryStep& b) { return a.step < b.step; });
  return t.status();
}

Status ReadCollectives(const sqlite::Database& db, const std::string& path, RankSummary& s) {
  TableReader t(db, path, *FindSummaryTable("collectives"));
  while (t.Next()) {
    SummaryCollective c;
    bool known = false;
    const std::string source = t.Text(0, "source");
    c.source = SourceNamed(source, &known);
    if (!known) t.Fail("unknown source '" + source + "'");
    c.call.rank = s.options.rank;
    c.call.group = t.Text(1, "process_group");
    c.call.name = t.Text(2, "name");
    c.call.seq = t.Int(3, "seq");
    c.call.ts = t.Int(4, "start_ns");
    c.call.end = t.Int(5, "end_ns");
    c.call.device = t.Int(6, "device") != 0;
    c.call.event = 0;  // the trace is not there
    c.in_bytes = t.OptionalInt(7, "in_bytes");
    c.out_bytes = t.OptionalInt(8, "out_bytes");
    c.step = t.OptionalInt(9, "step");
    s.collectives.push_back(std::move(c));
  }
  return t.status();
}

Status ReadTop(const sqlite::Database& db, const std::string& path, const char* table,
               std::vector<SummaryTopEntry>& out) {
  TableReader t(db, path, *FindSummaryTable(table));
  while (t.Next()) {
    out.push_back(SummaryTopEntry{t.Int(0, "step"), t.Int(1, "place"), t.Text(2, "name"),
                                  t.Int(3, "count"), t.Real(4, "total_us"), t.Real(5, "max_us")});
  }
  return t.status();
}

// The analyses a summary holds: id -> (name, rows).
Result<std::map<int64_t, std::pair<std::string, int64_t>>> AnalysesOf(const sqlite::Database& db,
                                                                      const std::string& path) {
  std::map<int64_t, std::pair<std::string, int64_t>> out;
  TableReader t(db, path, *FindSummaryTable("analyses"));
  while (t.Next()) {
    const int64_t id = t.Int(0, "id");
    out[id] = {t.Text(1, "name"), t.Int(2, "rows")};
  }
  if (Status st = t.status(); !st.ok()) return Error{st.message()};
  return out;
}

// One analysis' rows, rebuilt cell by cell with each cell's kind and decimals; the cells come
// in order, so each row is checked as it is built.
Result<AnalysisRows> ReadAnalysis(const sqlite::Database& db, const std::string& path, int64_t id,
                                  const std::string& name, int64_t row_count) {
  AnalysisRows rows;
  const std::string of_this = " WHERE analysis = " + std::to_string(id);
  {
    TableReader t(db, path, *FindSummaryTable("analysis_columns"), of_this + " ORDER BY position");
    while (t.Next()) {
      const int64_t position = t.Int(1, "position");
      if (position != static_cast<int64_t>(rows.columns.size())) {
        t.Fail("analysis " + name + " lacks column position " +
               std::to_string(rows.columns.size()));
        break;
      }
      rows.columns.push_back(t.Text(2, "name"));
    }
    if (Status st = t.status(); !st.ok()) return Error{st.message()};
  }
  const int64_t width = static_cast<int64_t>(rows.columns.size());
  {
    TableReader t(db, path, *FindSummaryTable("analysis_cells"),
                  of_this + " ORDER BY row, position");
    std::vector<Cell> row;
    int64_t row_number = -1;
    auto incomplete = [&] {
      t.Fail("analysis " + name + " row " + std::to_string(row_number) + " does not have its " +
             std::to_string(width) + " cells");
    };
    while (t.Next()) {
      const int64_t r = t.Int(1, "row"), position = t.Int(2, "position");
      if (r < 0) {
        t.Fail("analysis " + name + " has row " + std::to_string(r));
        break;
      }
      if (r != row_number) {
        if (row_number >= 0 && static_cast<int64_t>(row.size()) != width) {
          incomplete();
          break;
        }
        if (row_number >= 0) rows.rows.push_back(std::move(row));
        row.clear();
        if (r != row_number + 1) {
          t.Fail("analysis " + name + " lacks row " + std::to_string(row_number + 1));
          break;
        }
        row_number = r;
      }
      if (position != static_cast<int64_t>(row.size())) {
        incomplete();
        break;
      }
      Cell c = t.Any(3);
      if (const auto decimals = t.OptionalInt(4, "decimals"))
        c.decimals = static_cast<int>(*decimals);
      row.push_back(std::move(c));
    }
    if (Status st = t.status(); !st.ok()) return Error{st.message()};
    if (row_number >= 0) {
      if (static_cast<int64_t>(row.size()) != width)
        return Error{path + ": table analysis_cells: analysis " + name + " row " +
                     std::to_string(row_number) + " does not have its " + std::to_string(width) +
                     " cells"};
      rows.rows.push_back(std::move(row));
    }
    if (static_cast<int64_t>(rows.rows.size()) != row_count)
      return Error{path + ": table analysis_cells: analysis " + name + " has " +
                   std::to_string(rows.rows.size()) + " rows, table analyses says " +
                   std::to_string(row_count)};
  }
  {
    TableReader t(db, path, *FindSummaryTable("analysis_notes"), of_this);
    while (t.Next()) rows.notes.push_back(t.Text(1, "note"));
    if (Status st = t.status(); !st.ok()) return Error{st.message()};
  }
  return rows;
}

// Cells and columns must belong to an analysis the file lists.
Status CheckAnalysisIds(const sqlite::Database& db, const std::string& path) {
  for (const char* table : {"analysis_columns", "analysis_cells", "analysis_notes"}) {
    TableReader t(db, path, *FindSummaryTable(table),
                  " WHERE analysis IS NULL OR analysis NOT IN (SELECT id FROM analyses) LIMIT 1");
    if (t.Next())
      t.Fail("analysis " + std::to_string(t.Int(0, "analysis")) + " is not in table analyses");
    if (Status st = t.status(); !st.ok()) return st;
  }
  return Status::Ok();
}

Status ReadAnalyses(const sqlite::Database& db, const std::string& path, RankSummary& s) {
  auto analyses = AnalysesOf(db, path);
  if (!analyses.ok()) return analyses.error();
  if (Status st = CheckAnalysisIds(db, path); !st.ok()) return st;
  for (const auto& [id, named] : *analyses) {
    auto rows = ReadAnalysis(db, path, id, named.first, named.second);
    if (!rows.ok()) return rows.error();
    s.analyses.emplace_back(named.first, std::move(*rows));
  }
  return Status::Ok();
}

// The file's tables against the declared ones: what it lacks, and whether it is a summary at all.
Result<LoadedSummary> OpenedSummary(const sqlite::Database& db, const std::string& path) {
  auto tables = TablesOf(db, path);
  if (!tables.ok()) return tables.error();
  LoadedSummary out;
  out.path = path;
  for (const SummaryTable& table : SummaryTables()) {
    const std::string name(table.name);
    auto it = tables->find(name);
    if (it == tables->end()) {
      out.unavailable[name] = "no table " + name;
      continue;
    }
    for (const SummaryColumn& c : table.columns) {
      if (!it->second.count(std::string(c.name))) {
        out.unavailable[name] = "table " + name + " has no column " + std::string(c.name);
        break;
      }
    }
  }
  // Without these the file is no summary at all.
  for (const char* required : {"meta", "rank"}) {
    if (auto it = out.unavailable.find(required); it != out.unavailable.end())
      return Error{path + ": not a profsh rank summary (" + it->second + ")"};
  }
  for (const char* t : {"analyses", "analysis_columns", "analysis_cells", "analysis_notes"}) {
    if (auto it = out.unavailable.find(t); it != out.unavailable.end())
      out.unavailable["analyses"] = it->second;
  }
  return out;
}

}  // namespace

Result<LoadedSummary> ReadRankSummary(const std::string& path, SummaryParts parts) {
  auto opened = sqlite::Database::Open(path, true);
  if (!opened.ok()) return opened.error();
  const sqlite::Database& db = opened.value();
  auto loaded = OpenedSummary(db, path);
  if (!loaded.ok()) return loaded.error();
  LoadedSummary& out = *loaded;
  const auto available = [&](const char* table) { return !out.unavailable.count(table); };
  RankSummary& s = out.summary;
  for (Status st : {ReadMeta(db, path), ReadRank(db, path, s)})
    if (!st.ok()) return Error{st.message()};
  if (available("trace_metadata"))
    if (Status st = ReadMetadata(db, path, s); !st.ok()) return Error{st.message()};
  if (available("steps"))
    if (Status st = ReadSteps(db, path, s); !st.ok()) return Error{st.message()};
  if (available("collectives"))
    if (Status st = ReadCollectives(db, path, s); !st.ok()) return Error{st.message()};
  if (parts.top_entries && available("step_operators"))
    if (Status st = ReadTop(db, path, "step_operators", s.step_operators); !st.ok())
      return Error{st.message()};
  if (parts.top_entries && available("step_kernels"))
    if (Status st = ReadTop(db, path, "step_kernels", s.step_kernels); !st.ok())
      return Error{st.message()};
  if (available("analyses")) {
    // Not read: every row must still name an analysis the file lists. The rows themselves are
    // checked when an analysis reads them (ReadSummaryAnalysis).
    if (parts.analyses) {
      if (Status st = ReadAnalyses(db, path, s); !st.ok()) return Error{st.message()};
    } else if (Status st = CheckAnalysisIds(db, path); !st.ok()) {
      return Error{st.message()};
    }
  }
  return std::move(out);
}

Result<std::optional<AnalysisRows>> ReadSummaryAnalysis(const std::string& path,
                                                        const std::string& analysis) {
  auto opened = sqlite::Database::Open(path, true);
  if (!opened.ok()) return opened.error();
  const sqlite::Database& db = opened.value();
  auto analyses = AnalysesOf(db, path);
  if (!analyses.ok()) return analyses.error();
  for (const auto& [id, named] : *analyses) {
    if (named.first != analysis) continue;
    auto rows = ReadAnalysis(db, path, id, named.first, named.second);
    if (!rows.ok()) return rows.error();
    return std::optional<AnalysisRows>(std::move(*rows));
  }
  return std::optional<AnalysisRows>();
}

}  // namespace profsh
