// How reports show a table's numbers, the same in HTML and Markdown: one look per column, so a
// column never mixes "24587247.0" with "2235204.27" and "238.381".
#pragma once

#include <string>
#include <vector>

#include "engine/report/document.h"

namespace profsh::report {

// The decimals of a column's numbers: 0 when every value is whole, else by the largest magnitude
// (3 below 100, 2 below 100,000, 1 from there: a microsecond column keeps its nanoseconds while
// they are a visible part of its values); -1 when the column holds no number.
int ColumnDecimals(const Table& table, size_t column);

// Every cell as shown: numbers with their column's decimals, grouped by thousands in columns
// with a unit (measurements: us, bytes, %; counts and ids stay as they are), texts as given.
std::vector<std::vector<std::string>> FormatTableCells(const Table& table);

}  // namespace profsh::report
