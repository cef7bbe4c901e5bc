// The result of an analysis: named columns, rows of cells and notes (why a result is empty, what
// was left out). Lua receives the rows as plain tables; the same object prints itself aligned or
// as CSV, for `rows:table()`, `rows:to_csv(path)` and the command line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
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

// Rows of cells, stored compactly: the cells in blocks of 1 MiB (16 bytes a cell, a row after the
// other) and the texts in one buffer, so that a result of a million rows costs tens of MB, not
// hundreds, and can be given back block by block as it is copied out (ReleaseBefore). Rows go in
// as vectors of Cells and come out as Cells built on demand.
class RowList {
 public:
  void push_back(const std::vector<Cell>& row);
  void reserve(size_t rows, size_t width, size_t text_bytes = 0) {
    blocks_.reserve((rows * width + kBlockCells - 1) / kBlockCells);
    texts_.reserve(text_bytes);
  }
  size_t size() const { return width_ == 0 ? 0 : cells_ / width_; }
  bool empty() const { return cells_ == 0; }
  size_t width() const { return width_; }
  Cell cell(size_t row, size_t column) const;
  std::vector<Cell> operator[](size_t row) const;
  std::vector<Cell> at(size_t row) const;  // throws std::out_of_range past the end
  // The text of a text cell, empty for others; valid until the next push_back.
  std::string_view text(size_t row, size_t column) const;
  // Puts the rows in the order given (row indices, each once).
  void Reorder(const std::vector<size_t>& order);
  // Gives back the blocks that hold only rows before `row`, which must not be read again.
  void ReleaseBefore(size_t row);

 private:
  struct Packed {
    Cell::Kind kind = Cell::Kind::kEmpty;
    int8_t decimals = -1;
    uint32_t text_size = 0;
    union {
      int64_t int_value;
      double double_value;
      uint64_t text_offset;
    };
  };
  static_assert(sizeof(Packed) == 16);
  static constexpr size_t kBlockCells = size_t{1} << 16;
  const Packed& At(size_t row, size_t column) const {
    const size_t i = row * width_ + column;
    return blocks_[i / kBlockCells][i % kBlockCells];
  }
  void Append(const Packed& p);
  size_t width_ = 0;
  size_t cells_ = 0;
  std::vector<std::vector<Packed>> blocks_;
  std::string texts_;
};

struct AnalysisRows {
  std::vector<std::string> columns;
  RowList rows;  // each as long as `columns`
  std::vector<std::string> notes;

  size_t Column(const std::string& name) const;  // SIZE_MAX when absent
  // Columns aligned under a header line; numbers right-aligned, text left-aligned; notes after.
  std::string FormatTable() const;
  // RFC 4180: a header line, fields quoted when they hold a comma, quote or line break.
  std::string FormatCsv() const;
  Status WriteCsv(const std::string& path) const;
  // The same columns and notes with only the rows given (indices, in that order).
  AnalysisRows Select(const std::vector<uint32_t>& row_indices) const;
};

// Python's round(x, digits) for the values the analyses print (correctly rounded, ties to even
// on the binary value, as HTA's pandas rounding does).
double RoundDecimal(double x, int digits);

}  // namespace profsh
