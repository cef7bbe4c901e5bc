#include "engine/summary/summary_writer.h"

#include "engine/exporters/sqlite_handle.h"
#include "engine/io/atomic_writer.h"
#include "engine/summary/summary_schema.h"

namespace profsh {

namespace {

// INSERT INTO table VALUES (?, ?, ...) with one placeholder per declared column.
std::string InsertSql(std::string_view table) {
  const SummaryTable* t = FindSummaryTable(table);
  std::string sql = "INSERT INTO " + std::string(table) + " VALUES (";
  for (size_t c = 0; c < t->columns.size(); ++c) sql += c == 0 ? "?" : ", ?";
  return sql + ")";
}

void OptionalInt(sqlite::Inserter& row, int column, const std::optional<int64_t>& v) {
  row.OptionalInt(column, v.has_value(), v.value_or(0));
}

Status WriteMeta(const RankSummary& s, const sqlite::Database& db) {
  sqlite::Inserter row(db, InsertSql("meta"));
  auto put_int = [&](std::string_view key, int64_t v) {
    row.Text(1, key);
    row.Int(2, v);
    row.Insert();
  };
  put_int("schema_version", kSummarySchemaVersion);
  put_int("top_operators", static_cast<int64_t>(s.options.top_operators));
  put_int("top_kernels", static_cast<int64_t>(s.options.top_kernels));
  row.Text(1, "writer");
  row.Text(2, "profsh summarize");
  row.Insert();
  return row.status();
}

Status WriteRank(const RankSummary& s, const sqlite::Database& db) {
  sqlite::Inserter row(db, InsertSql("rank"));
  row.Int(1, s.options.rank);
  row.Text(2, s.options.rank_from);
  row.Text(3, s.options.path);
  row.Text(4, s.format);
  row.Int(5, static_cast<int64_t>(s.events));
  row.Int(6, s.origin_ns);
  row.Int(7, s.has_origin ? 1 : 0);
  OptionalInt(row, 8, s.first_event_ns);
  row.OptionalInt(9, s.first_step.has_value(), s.first_step ? s.first_step->first : 0);
  row.OptionalInt(10, s.first_step.has_value(), s.first_step ? s.first_step->second : 0);
  if (s.distributed_info) {
    row.Text(11, *s.distributed_info);
  } else {
    row.Null(11);
  }
  row.Insert();
  if (Status st = row.status(); !st.ok()) return st;
  sqlite::Inserter meta(db, InsertSql("trace_metadata"));
  for (const auto& [key, json] : s.metadata) {
    meta.Text(1, key);
    meta.Text(2, json);
    meta.Insert();
  }
  return meta.status();
}

Status WriteSteps(const RankSummary& s, const sqlite::Database& db) {
  sqlite::Inserter row(db, InsertSql("steps"));
  for (const SummaryStep& step : s.steps) {
    row.Int(1, step.step);
    row.Int(2, step.start_ns);
    row.Int(3, step.end_ns);
    row.Int(4, step.operators);
    row.Int(5, step.kernels);
    row.Insert();
  }
  return row.status();
}

Status WriteCollectives(const RankSummary& s, const sqlite::Database& db) {
  sqlite::Inserter row(db, InsertSql("collectives"));
  for (const SummaryCollective& c : s.collectives) {
    row.Text(1, CollectiveSourceName(c.source));
    row.Text(2, c.call.group);
    row.Text(3, c.call.name);
    row.Int(4, c.call.seq);
    row.Int(5, c.call.ts);
    row.Int(6, c.call.end);
    row.Int(7, c.call.device ? 1 : 0);
    OptionalInt(row, 8, c.in_bytes);
    OptionalInt(row, 9, c.out_bytes);
    OptionalInt(row, 10, c.step);
    row.Insert();
  }
  return row.status();
}

Status WriteTop(const std::vector<SummaryTopEntry>& entries, std::string_view table,
                const sqlite::Database& db) {
  sqlite::Inserter row(db, InsertSql(table));
  for (const SummaryTopEntry& e : entries) {
    row.Int(1, e.step);
    row.Int(2, e.place);
    row.Text(3, e.name);
    row.Int(4, e.count);
    row.Real(5, e.total_us);
    row.Real(6, e.max_us);
    row.Insert();
  }
  return row.status();
}

// Each cell keeps its kind: the value column has no declared type, so SQLite stores integers,
// reals, text and NULL (an empty cell) as they are.
Status WriteAnalyses(const RankSummary& s, const sqlite::Database& db) {
  sqlite::Inserter analysis(db, InsertSql("analyses"));
  sqlite::Inserter column(db, InsertSql("analysis_columns"));
  sqlite::Inserter cell(db, InsertSql("analysis_cells"));
  sqlite::Inserter note(db, InsertSql("analysis_notes"));
  int64_t id = 0;
  for (const auto& [name, rows] : s.analyses) {
    ++id;
    analysis.Int(1, id);
    analysis.Text(2, name);
    analysis.Int(3, static_cast<int64_t>(rows.rows.size()));
    analysis.Insert();
    for (size_t c = 0; c < rows.columns.size(); ++c) {
      column.Int(1, id);
      column.Int(2, static_cast<int64_t>(c));
      column.Text(3, rows.columns[c]);
      column.Insert();
    }
    for (size_t r = 0; r < rows.rows.size(); ++r) {
      for (size_t c = 0; c < rows.columns.size(); ++c) {
        const Cell v = rows.rows.cell(r, c);
        cell.Int(1, id);
        cell.Int(2, static_cast<int64_t>(r));
        cell.Int(3, static_cast<int64_t>(c));
        switch (v.kind) {
          case Cell::Kind::kInt:
            cell.Int(4, v.int_value);
            break;
          case Cell::Kind::kDouble:
            cell.Real(4, v.double_value);
            break;
          case Cell::Kind::kText:
            cell.Text(4, v.text);
            break;
          case Cell::Kind::kEmpty:
            cell.Null(4);
            break;
        }
        cell.OptionalInt(5, v.decimals >= 0, v.decimals);
        cell.Insert();
      }
    }
    for (const std::string& n : rows.notes) {
      note.Int(1, id);
      note.Text(2, n);
      note.Insert();
    }
  }
  for (const sqlite::Inserter* i : {&analysis, &column, &cell, &note})
    if (Status st = i->status(); !st.ok()) return st;
  return Status::Ok();
}

}  // namespace

Status WriteRankSummary(const RankSummary& summary, const std::string& path) {
  auto db = sqlite::Database::Open(":memory:", false);
  if (!db.ok()) return db.error();
  const sqlite::Database& d = db.value();
  if (Status s = d.Execute("BEGIN;\n" + SummarySchemaSql()); !s.ok()) return s;
  for (Status s :
       {WriteMeta(summary, d), WriteRank(summary, d), WriteSteps(summary, d),
        WriteCollectives(summary, d), WriteTop(summary.step_operators, "step_operators", d),
        WriteTop(summary.step_kernels, "step_kernels", d), WriteAnalyses(summary, d)}) {
    if (!s.ok()) return Error{path + ": " + s.message()};
  }
  if (Status s = d.Execute("COMMIT; VACUUM;"); !s.ok()) return s;
  sqlite3_int64 size = 0;
  unsigned char* bytes = sqlite3_serialize(d.get(), "main", &size, 0);
  if (bytes == nullptr) return Error{path + ": SQLite could not serialize the summary"};
  auto writer = AtomicWriter::Create(path);
  if (!writer.ok()) {
    sqlite3_free(bytes);
    return writer.error();
  }
  writer.value()->Write(reinterpret_cast<const char*>(bytes), static_cast<size_t>(size));
  sqlite3_free(bytes);
  return writer.value()->Commit();
}

}  // namespace profsh
