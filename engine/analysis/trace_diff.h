// Two traces side by side, as HTA's TraceDiff (hta/trace_diff.py) compares them: per operator or
// kernel name, how often it ran and for how long in a control and a test trace, within one
// ProfilerStep of each, and which of five groups the change falls in. docs/ANALYSIS.md states the
// definition and where profsh differs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/analysis/analysis_rows.h"
#include "engine/trace/trace.h"
#include "engine/util/result.h"

namespace profsh {

// HTA's DeviceType: kCpu counts the events without a stream (operators, runtime calls,
// annotations, Event Sync), kGpu those on a stream (kernels, copies, sets, gpu_user_annotation).
enum class DiffDevice : uint8_t { kAll, kCpu, kGpu };

// Which part of a trace takes part.
struct DiffStep {
  enum class Kind : uint8_t { kFirst, kNumber, kWhole };
  Kind kind = Kind::kFirst;  // HTA's default: the lowest ProfilerStep number (whole trace if none)
  int64_t number = 0;        // kNumber: ProfilerStep#number
};

struct TraceDiffOptions {
  DiffDevice device = DiffDevice::kAll;
  DiffStep control_step, test_step;
  bool short_names = false;  // HTA's use_short_name: without arguments and template parameters
};

// name (or short_name), control_counts, control_total_duration, test_counts,
// test_total_duration, diff_counts, diff_duration (µs, HTA's rounding), counts_change_categories
// ("+", "-", "="), change (added, deleted, increased, decreased, unchanged); sorted by name.
// Fails, naming the trace, when a step asked for is not in it.
Result<AnalysisRows> DiffTraces(const Trace& control, const Trace& test,
                                const TraceDiffOptions& options);

// Which rows of DiffTraces to show, in which order: HTA orders by name and keeps every row;
// telling what changed most needs an order by the change and a floor under it.
struct DiffRowSelection {
  // A column of DiffTraces' rows: "name" (HTA's order), "diff_duration", "diff_counts" (by their
  // size, largest change first, growth before shrinkage of the same size), "control_counts",
  // "test_counts", "control_total_duration", "test_total_duration" (largest first).
  std::string sort = "name";
  // Rows whose change is smaller than this are left out: |diff_counts| when sorted by a counts
  // column, |diff_duration| (µs) otherwise. 0 keeps every row.
  double min_change = 0;
  size_t row_limit = 0;  // the first rows kept after sorting and filtering; 0: all
};

// The keys `sort` takes, in the order usage texts list them.
inline constexpr const char* kDiffSortKeys[] = {"name",
                                                "diff_duration",
                                                "diff_counts",
                                                "control_total_duration",
                                                "test_total_duration",
                                                "control_counts",
                                                "test_counts"};

// Checks a sort key; the error lists the keys.
Status CheckDiffSort(std::string_view key);

// DiffTraces' rows sorted and filtered as `selection` says, with a note for each rule applied
// (the order, what the floor and the limit left out).
AnalysisRows SelectDiffRows(const AnalysisRows& rows, const DiffRowSelection& selection);

// The spellings the Lua option and the command line share: "all", "cpu", "gpu"; a step number,
// "first" or "whole". Errors say what was expected.
Result<DiffDevice> ParseDiffDevice(std::string_view text);
Result<DiffStep> ParseDiffStep(std::string_view text);

// HTA's shorten_name: drops "->", argument lists and template parameters, keeps the last word;
// memory kernels (Memcpy, Memset, dma) keep their names.
std::string ShortenName(std::string_view name);

// The five groups in HTA's ops_diff order, as the `change` column spells them.
inline constexpr const char* kDiffGroups[] = {"added", "deleted", "increased", "decreased",
                                              "unchanged"};

}  // namespace profsh
