// The result of an analysis: named columns, rows of cells and notes (why a result is empty, what
// was left out). Lua receives the rows as plain tables; the same object prints itself aligned or
// as CSV, for `rows:table()`, `rows:to_csv(path)` and the command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/util/result.h"

namespace profsh {

struct Cell {
  enum class Kind : uint8_t { kEmpty, kInt, kDouble, kText };
  Kind kind = Kind::kEmpty;
  int64_t int_value = 0;
  double double_value = 0;
  std::string text;
  int decimals = -1;  // a double printed with this many decimals; -1: see Format()

  static Cell Int(int64_t v) { return Cell{Kind::kInt, v, 0, {}}; }
  static Cell Double(double v) { return Cell{Kind::kDouble, 0, v, {}}; }
  // A double always printed with `decimals` decimals (nsys' reports: "5783718.2").
  static Cell Fixed(double v, int decimals) { return Cell{Kind::kDouble, 0, v, {}, decimals}; }
  static Cell Text(std::string v) { return Cell{Kind::kText, 0, 0, std::move(v)}; }
  static Cell Empty() { return Cell{}; }
  // As a table or CSV shows it: integers in full, doubles with up to 6 significant decimals
  // ("%.6g" unless that loses integral digits), empty cells as nothing.
  std::string Format() const;
};

struct AnalysisRows {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;  // each as long as `columns`
  std::vector<std::string> notes;

  size_t Column(const std::string& name) const;  // SIZE_MAX when absent
  // Columns aligned under a header line; numbers right-aligned, text left-aligned; notes after.
  std::string FormatTable() const;
  // RFC 4180: a header line, fields quoted when they hold a comma, quote or line break.
  std::string FormatCsv() const;
  Status WriteCsv(const std::string& path) const;
};

// Python's round(x, digits) for the values the analyses print (correctly rounded, ties to even
// on the binary value, as HTA's pandas rounding does).
double RoundDecimal(double x, int digits);

}  // namespace profsh
