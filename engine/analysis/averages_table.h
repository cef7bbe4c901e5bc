// The text table of EventList.table() in PyTorch 1.13 and 2.x (torch/autograd/profiler_util.py,
// _build_table), reproduced byte for byte: the same columns under the same conditions, widths,
// truncation, number formats, percent denominators, trailing spaces and footer lines, including
// the quirk that puts FLOPs under "Source Location" when both columns are shown. Where 2.x prints
// differently (every stack frame instead of five) TableOptions::torch_format decides.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/key_averages.h"
#include "engine/util/result.h"

namespace profsh {

struct TableOptions {
  std::optional<std::string> sort_by;
  int64_t row_limit = 100;  // negative: no limit
  std::optional<int64_t> max_src_column_width = 75;
  std::optional<int64_t> max_name_column_width = 55;
  std::optional<int64_t> max_shapes_column_width = 80;
  std::optional<std::string> header;
  bool top_level_events_only = false;
  std::optional<std::string> time_unit;  // "s", "ms" or "us" (newer torch's option)
  // Whose table to print; by default the one key_averages() grouped like (KeyAverages).
  std::optional<TorchFormat> torch_format;
};

// Every key torch's table(sort_by=...) accepts, with the newer device aliases.
const std::vector<std::string>& SortKeys();
bool IsSortKey(const std::string& key);

// Rows ordered as table() orders them (descending by `sort_by`, stable), for Lua callers that
// want the sorted list itself.
Result<std::vector<uint32_t>> SortedRowOrder(const KeyAverages& averages,
                                             const std::string& sort_by);

Result<std::string> BuildAveragesTable(const KeyAverages& averages, const TableOptions& options);

// torch's _format_time, _format_time_share and _format_memory.
std::string FormatTime(double time_us, const std::optional<std::string>& unit = std::nullopt);
std::string FormatTimeShare(double time_us, double total_us);
std::string FormatMemory(int64_t nbytes);

}  // namespace profsh
