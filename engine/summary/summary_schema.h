// The rank summary file (`profsh summarize`): one SQLite file per rank of a job, kilobytes to a
// few MB whatever the trace's size, holding what the job-wide analyses (profsh.load_summaries)
// need without the trace. The tables are declared here once, as data: the writer creates them
// from it, a reader checks a file's tables and columns against it. docs/ANALYSIS.md ("Rank
// summaries") defines every column.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace profsh {

// Bumped whenever a table or column changes meaning; kept in meta ("schema_version").
inline constexpr int64_t kSummarySchemaVersion = 1;

struct SummaryColumn {
  std::string_view name;
  std::string_view type;  // SQLite's declared type; "" keeps each value's own type
};

struct SummaryTable {
  std::string_view name;
  std::span<const SummaryColumn> columns;
};

// Every table of a summary, in the order the writer creates them.
std::span<const SummaryTable> SummaryTables();
const SummaryTable* FindSummaryTable(std::string_view name);

// CREATE TABLE statements for every table.
std::string SummarySchemaSql();

}  // namespace profsh
