#include "engine/summary/summary_schema.h"

namespace profsh {

namespace {

// meta: key -> value (schema_version, writer, top_operators, top_kernels).
constexpr SummaryColumn kMeta[] = {{"key", "TEXT"}, {"value", ""}};
// One row: the rank and everything load_ranks knows of its file.
constexpr SummaryColumn kRank[] = {
    {"rank", "INTEGER"},          {"rank_from", "TEXT"},         {"path", "TEXT"},
    {"format", "TEXT"},           {"events", "INTEGER"},         {"origin_ns", "INTEGER"},
    {"has_origin", "INTEGER"},    {"first_event_ns", "INTEGER"}, {"first_step", "INTEGER"},
    {"first_step_ns", "INTEGER"}, {"distributed_info", "TEXT"}};
// The trace's own metadata, as JSON text per key.
constexpr SummaryColumn kTraceMetadata[] = {{"key", "TEXT"}, {"json", "TEXT"}};
// ProfilerStep#N: the earliest start and the latest end of each step number (ns).
constexpr SummaryColumn kSteps[] = {{"step", "INTEGER"},
                                    {"start_ns", "INTEGER"},
                                    {"end_ns", "INTEGER"},
                                    {"operators", "INTEGER"},
                                    {"kernels", "INTEGER"}};
// Every collective call of every source the trace holds (ns on the rank's clock).
constexpr SummaryColumn kCollectives[] = {{"source", "TEXT"},       {"process_group", "TEXT"},
                                          {"name", "TEXT"},         {"seq", "INTEGER"},
                                          {"start_ns", "INTEGER"},  {"end_ns", "INTEGER"},
                                          {"device", "INTEGER"},    {"in_bytes", "INTEGER"},
                                          {"out_bytes", "INTEGER"}, {"step", "INTEGER"}};
// The N operators (CPU) and kernels (device) with the most time in each step.
constexpr SummaryColumn kStepTop[] = {{"step", "INTEGER"},  {"place", "INTEGER"},
                                      {"name", "TEXT"},     {"count", "INTEGER"},
                                      {"total_us", "REAL"}, {"max_us", "REAL"}};
// Analyses' rows as the engine computed them for this rank: each analysis once (its id), its
// columns, its cells (the value keeps its kind: integer, real, text, NULL for an empty cell)
// and its notes.
constexpr SummaryColumn kAnalyses[] = {{"id", "INTEGER"}, {"name", "TEXT"}, {"rows", "INTEGER"}};
constexpr SummaryColumn kAnalysisColumns[] = {
    {"analysis", "INTEGER"}, {"position", "INTEGER"}, {"name", "TEXT"}};
constexpr SummaryColumn kAnalysisCells[] = {{"analysis", "INTEGER"},
                                            {"row", "INTEGER"},
                                            {"position", "INTEGER"},
                                            {"value", ""},
                                            {"decimals", "INTEGER"}};
constexpr SummaryColumn kAnalysisNotes[] = {{"analysis", "INTEGER"}, {"note", "TEXT"}};

constexpr SummaryTable kTables[] = {
    {"meta", kMeta},
    {"rank", kRank},
    {"trace_metadata", kTraceMetadata},
    {"steps", kSteps},
    {"collectives", kCollectives},
    {"step_operators", kStepTop},
    {"step_kernels", kStepTop},
    {"analyses", kAnalyses},
    {"analysis_columns", kAnalysisColumns},
    {"analysis_cells", kAnalysisCells},
    {"analysis_notes", kAnalysisNotes},
};

}  // namespace

std::span<const SummaryTable> SummaryTables() {
  return kTables;
}

const SummaryTable* FindSummaryTable(std::string_view name) {
  for (const SummaryTable& t : kTables)
    if (t.name == name) return &t;
  return nullptr;
}

std::string SummarySchemaSql() {
  std::string sql;
  for (const SummaryTable& t : kTables) {
    sql += "CREATE TABLE ";
    sql += t.name;
    sql += " (";
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (c > 0) sql += ", ";
      sql += '"';
      sql += t.columns[c].name;
      sql += '"';
      if (!t.columns[c].type.empty()) {
        sql += ' ';
        sql += t.columns[c].type;
      }
    }
    sql += ");\n";
  }
  return sql;
}

}  // namespace profsh
