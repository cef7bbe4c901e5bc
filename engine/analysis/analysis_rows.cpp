#include "engine/analysis/analysis_rows.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "engine/io/atomic_writer.h"

namespace profsh {

std::string Cell::Format() const {
  switch (kind) {
    case Kind::kEmpty:
      return {};
    case Kind::kInt:
      return std::to_string(int_value);
    case Kind::kText:
      return text;
    case Kind::kDouble: {
      if (std::isnan(double_value)) return "nan";
      char buf[64];
      if (decimals >= 0) {
        std::snprintf(buf, sizeof(buf), "%.*f", decimals, double_value);
        return buf;
      }
      // Whole numbers print without a fraction; others keep enough digits to read 0.1 % apart.
      if (double_value == std::floor(double_value) && std::fabs(double_value) < 1e15) {
        std::snprintf(buf, sizeof(buf), "%.1f", double_value);
      } else if (std::fabs(double_value) >= 1e5) {
        std::snprintf(buf, sizeof(buf), "%.2f", double_value);
      } else {
        std::snprintf(buf, sizeof(buf), "%.6g", double_value);
      }
      return buf;
    }
  }
  return {};
}

void RowList::push_back(const std::vector<Cell>& row) {
  if (width_ == 0) width_ = row.size();
  if (row.size() != width_ || width_ == 0)
    throw std::logic_error("RowList: every row needs the same, non-zero number of cells");
  for (const Cell& c : row) {
    Packed p;
    p.kind = c.kind;
    p.decimals = static_cast<int8_t>(c.decimals);
    switch (c.kind) {
      case Cell::Kind::kEmpty:
        p.int_value = 0;
        break;
      case Cell::Kind::kInt:
        p.int_value = c.int_value;
        break;
      case Cell::Kind::kDouble:
        p.double_value = c.double_value;
        break;
      case Cell::Kind::kText:
        p.text_offset = texts_.size();
        p.text_size = static_cast<uint32_t>(c.text.size());
        texts_ += c.text;
        break;
    }
    Append(p);
  }
}

void RowList::Append(const Packed& p) {
  if (cells_ % kBlockCells == 0) {
    blocks_.emplace_back();
    blocks_.back().reserve(kBlockCells);
  }
  blocks_.back().push_back(p);
  ++cells_;
}

void RowList::ReleaseBefore(size_t row) {
  const size_t whole_blocks = std::min(row * width_, cells_) / kBlockCells;
  for (size_t b = 0; b < whole_blocks; ++b) std::vector<Packed>().swap(blocks_[b]);
}

Cell RowList::cell(size_t row, size_t column) const {
  const Packed& p = At(row, column);
  Cell c;
  c.kind = p.kind;
  c.decimals = p.decimals;
  switch (p.kind) {
    case Cell::Kind::kEmpty:
      break;
    case Cell::Kind::kInt:
      c.int_value = p.int_value;
      break;
    case Cell::Kind::kDouble:
      c.double_value = p.double_value;
      break;
    case Cell::Kind::kText:
      c.text.assign(texts_, p.text_offset, p.text_size);
      break;
  }
  return c;
}

std::string_view RowList::text(size_t row, size_t column) const {
  const Packed& p = At(row, column);
  if (p.kind != Cell::Kind::kText) return {};
  return std::string_view(texts_).substr(p.text_offset, p.text_size);
}

std::vector<Cell> RowList::operator[](size_t row) const {
  std::vector<Cell> cells;
  cells.reserve(width_);
  for (size_t c = 0; c < width_; ++c) cells.push_back(cell(row, c));
  return cells;
}

std::vector<Cell> RowList::at(size_t row) const {
  if (row >= size()) throw std::out_of_range("RowList::at");
  return (*this)[row];
}

void RowList::Reorder(const std::vector<size_t>& order) {
  RowList sorted;
  sorted.width_ = width_;
  sorted.texts_ = std::move(texts_);
  sorted.blocks_.reserve(blocks_.size());
  for (size_t r : order)
    for (size_t c = 0; c < width_; ++c) sorted.Append(At(r, c));
  *this = std::move(sorted);
}

AnalysisRows AnalysisRows::Select(const std::vector<uint32_t>& row_indices) const {
  AnalysisRows out;
  out.columns = columns;
  out.notes = notes;
  for (uint32_t r : row_indices) out.rows.push_back(rows[r]);
  return out;
}

size_t AnalysisRows::Column(const std::string& name) const {
  auto it = std::find(columns.begin(), columns.end(), name);
  return it == columns.end() ? SIZE_MAX : static_cast<size_t>(it - columns.begin());
}

std::string AnalysisRows::FormatTable() const {
  const size_t count = rows.size();
  std::vector<std::vector<std::string>> text(count);
  std::vector<size_t> width(columns.size());
  std::vector<bool> numeric(columns.size(), true);
  for (size_t c = 0; c < columns.size(); ++c) width[c] = columns[c].size();
  for (size_t r = 0; r < count; ++r) {
    text[r].reserve(columns.size());
    for (size_t c = 0; c < columns.size(); ++c) {
      const Cell cell = rows.cell(r, c);
      text[r].push_back(cell.Format());
      width[c] = std::max(width[c], text[r][c].size());
      if (cell.kind == Cell::Kind::kText) numeric[c] = false;
    }
  }
  std::string out;
  auto put = [&](const std::string& s, size_t c) {
    if (c > 0) out += "  ";
    size_t pad = width[c] - s.size();
    if (numeric[c]) out.append(pad, ' ');
    out += s;
    if (!numeric[c] && c + 1 < columns.size()) out.append(pad, ' ');
  };
  for (size_t c = 0; c < columns.size(); ++c) put(columns[c], c);
  out += '\n';
  for (const auto& row : text) {
    for (size_t c = 0; c < columns.size(); ++c) put(row[c], c);
    out += '\n';
  }
  for (const std::string& note : notes) out += "note: " + note + "\n";
  return out;
}

namespace {

void AppendCsvField(std::string& out, const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) {
    out += field;
    return;
  }
  out += '"';
  for (char ch : field) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
}

}  // namespace

std::string AnalysisRows::FormatCsv() const {
  std::string out;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c > 0) out += ',';
    AppendCsvField(out, columns[c]);
  }
  out += '\n';
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) out += ',';
      AppendCsvField(out, rows.cell(r, c).Format());
    }
    out += '\n';
  }
  return out;
}

Status AnalysisRows::WriteCsv(const std::string& path) const {
  return WriteFileAtomically(path, FormatCsv());
}

double RoundDecimal(double x, int digits) {
  if (!std::isfinite(x)) return x;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, x);
  return std::strtod(buf, nullptr);
}

}  // namespace profsh
