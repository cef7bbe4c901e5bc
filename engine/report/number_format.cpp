#include "engine/report/number_format.h"

#include <algorithm>
#include <cmath>

#include "engine/util/human_text.h"

namespace profsh::report {

namespace {

bool IsNumber(const Cell& c) {
  return c.kind == Cell::Kind::kInt || c.kind == Cell::Kind::kDouble;
}

double ValueOf(const Cell& c) {
  return c.kind == Cell::Kind::kInt ? static_cast<double>(c.int_value) : c.double_value;
}

}  // namespace

int ColumnDecimals(const Table& table, size_t column) {
  bool any = false, whole = true;
  double largest = 0;
  for (const auto& row : table.rows) {
    const Cell& c = row[column];
    if (!IsNumber(c)) continue;
    const double v = ValueOf(c);
    if (!std::isfinite(v)) continue;
    any = true;
    whole = whole && v == std::floor(v);
    largest = std::max(largest, std::fabs(v));
  }
  if (!any) return -1;
  if (whole) return 0;
  return largest < 100 ? 3 : largest < 100000 ? 2 : 1;
}

std::vector<std::vector<std::string>> FormatTableCells(const Table& table) {
  std::vector<int> decimals(table.columns.size());
  for (size_t c = 0; c < table.columns.size(); ++c) decimals[c] = ColumnDecimals(table, c);
  std::vector<std::vector<std::string>> out;
  out.reserve(table.rows.size());
  for (const auto& row : table.rows) {
    std::vector<std::string> shown;
    shown.reserve(row.size());
    for (size_t c = 0; c < row.size(); ++c) {
      const Cell& cell = row[c];
      const double v = IsNumber(cell) ? ValueOf(cell) : 0;
      if (!IsNumber(cell) || !std::isfinite(v)) {
        shown.push_back(cell.Format());
      } else if (!table.columns[c].unit.empty()) {
        shown.push_back(GroupedNumber(v, decimals[c]));
      } else if (cell.kind == Cell::Kind::kInt && decimals[c] == 0) {
        shown.push_back(std::to_string(cell.int_value));  // exact past 2^53
      } else {
        shown.push_back(Cell::Fixed(v, decimals[c]).Format());
      }
    }
    out.push_back(std::move(shown));
  }
  return out;
}

}  // namespace profsh::report
