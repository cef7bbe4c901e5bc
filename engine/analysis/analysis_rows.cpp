#include "engine/analysis/analysis_rows.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

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

size_t AnalysisRows::Column(const std::string& name) const {
  auto it = std::find(columns.begin(), columns.end(), name);
  return it == columns.end() ? SIZE_MAX : static_cast<size_t>(it - columns.begin());
}

std::string AnalysisRows::FormatTable() const {
  std::vector<std::vector<std::string>> text(rows.size());
  std::vector<size_t> width(columns.size());
  std::vector<bool> numeric(columns.size(), true);
  for (size_t c = 0; c < columns.size(); ++c) width[c] = columns[c].size();
  for (size_t r = 0; r < rows.size(); ++r) {
    text[r].reserve(columns.size());
    for (size_t c = 0; c < columns.size(); ++c) {
      text[r].push_back(rows[r][c].Format());
      width[c] = std::max(width[c], text[r][c].size());
      if (rows[r][c].kind == Cell::Kind::kText) numeric[c] = false;
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
  for (const auto& row : rows) {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) out += ',';
      AppendCsvField(out, row[c].Format());
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
