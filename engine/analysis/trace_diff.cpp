#include "engine/analysis/trace_diff.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/analysis/gpu_events.h"
#include "engine/analysis/model/event_model.h"
#include "engine/util/saturating.h"

namespace profsh {

namespace {

// HTA's step pattern "ProfilerStep\s*#\s*(\d+)" at the start of `name`: its digits. Written out:
// std::regex's matcher recursed once per space or digit, and a long run overflowed the stack.
bool StepDigits(std::string_view name, std::string_view* digits) {
  constexpr std::string_view kStep = "ProfilerStep";
  if (name.substr(0, kStep.size()) != kStep) return false;
  auto is_space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  size_t p = kStep.size();
  while (p < name.size() && is_space(name[p])) ++p;
  if (p == name.size() || name[p] != '#') return false;
  ++p;
  while (p < name.size() && is_space(name[p])) ++p;
  const size_t first = p;
  while (p < name.size() && name[p] >= '0' && name[p] <= '9') ++p;
  *digits = name.substr(first, p - first);
  return p > first;
}

constexpr int64_t kNoStep = INT64_MIN;

struct HtaStep {
  int64_t ts, end, number;
};

// HTA's add_iteration looks the ProfilerStep up by start time, the last step in trace order
// winning where steps overlap. Steps are few; events are many: the timeline is cut at every step
// boundary once and each piece keeps the step that owns it, so a look-up is a binary search.
class StepTimeline {
 public:
  explicit StepTimeline(const std::vector<HtaStep>& steps) {
    for (const HtaStep& s : steps) {
      if (s.end <= s.ts) continue;  // HTA: ts <= t < ts + dur holds for no t
      bounds_.push_back(s.ts);
      bounds_.push_back(s.end);
    }
    std::sort(bounds_.begin(), bounds_.end());
    bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
    owner_.assign(bounds_.empty() ? 0 : bounds_.size() - 1, kNoStep);
    for (const HtaStep& s : steps) {
      if (s.end <= s.ts) continue;
      size_t from = std::lower_bound(bounds_.begin(), bounds_.end(), s.ts) - bounds_.begin();
      size_t to = std::lower_bound(bounds_.begin(), bounds_.end(), s.end) - bounds_.begin();
      for (size_t k = from; k < to; ++k) owner_[k] = s.number;
    }
  }
  int64_t StepAt(int64_t ts) const {
    auto it = std::upper_bound(bounds_.begin(), bounds_.end(), ts);
    if (it == bounds_.begin() || it == bounds_.end()) return kNoStep;
    return owner_[static_cast<size_t>(it - bounds_.begin()) - 1];
  }

 private:
  std::vector<int64_t> bounds_;
  std::vector<int64_t> owner_;  // piece k = [bounds_[k], bounds_[k+1])
};

struct NameTotals {
  int64_t counts = 0, total_duration = 0;
};

// One trace as HTA's parser and add_iteration see it, read in passes over the event table
// (nothing per event is kept): the complete events with a category other than "Trace", times in
// HTA's rounded microseconds, each event's ProfilerStep ("iteration"). Streams, correlations and
// the runtime calls of a correlation come from the event model.
class DiffSide {
 public:
  explicit DiffSide(const Trace& trace) : trace_(trace), model_(ModelOf(trace)) {
    ReadTemplates();
    ReadSteps();
  }

  // Distinct step numbers, ascending.
  const std::vector<int64_t>& step_numbers() const { return step_numbers_; }

  // Counts and µs per string id of the events in `step` (kNoStep with `whole`: all of them) on
  // the device asked for.
  std::unordered_map<uint32_t, NameTotals> Totals(bool whole, int64_t step,
                                                  DiffDevice device) const {
    const StepTimeline timeline(steps_);
    const EventTable& ev = trace_.events;
    const auto& template_column = ev.template_column();
    // HTA's add_iteration: host events (no stream; a cpu_op on stream 0, as Triton writes them)
    // take the step they start in; events on a stream take the step of the host call with
    // their correlation (StepOfLaunch).
    std::unordered_map<uint32_t, NameTotals> totals;
    for (size_t i = 0; i < ev.size(); ++i) {
      const TemplateInfo& t = info_[template_column[i]];
      if (!t.kept) continue;
      const int64_t stream = Int(i, KnownArg::kStream);
      if (device == DiffDevice::kCpu && stream != -1) continue;
      if (device == DiffDevice::kGpu && stream == -1) continue;
      const auto [ts, end] = Rounded(i);
      if (!whole) {
        int64_t event_step = kNoStep;
        if (stream < 0 || (stream == 0 && t.cpu_op)) {
          event_step = timeline.StepAt(ts);
        } else if (stream > 0) {
          const int64_t correlation = Int(i, KnownArg::kCorrelation);
          if (correlation != -1 && OnDevice(t, stream, correlation))
            event_step = StepOfLaunch(correlation, timeline);
        }
        if (event_step != step) continue;
      }
      NameTotals& n = totals[ev.name(i)];
      ++n.counts;
      n.total_duration += end - ts;
    }
    return totals;
  }

 private:
  struct TemplateInfo {
    bool kept = false, cpu_op = false, sync = false, step = false;
    int64_t step_number = 0;
  };
  void ReadTemplates() {
    for (const EventTemplate& t : trace_.events.templates()) {
      TemplateInfo i;
      uint16_t category = EventTable::CategoryOf(t.kind);
      std::string_view cat = trace_.category_name(category);
      i.kept = EventTable::PhaseOf(t.kind) == 'X' && category != 0 && cat != "Trace";
      i.cpu_op = cat == "cpu_op";
      std::string_view name = trace_.str(t.name);
      i.sync = name == "Event Sync" || name == "Context Sync";
      std::string_view digits;
      if (i.kept && StepDigits(name, &digits)) {
        i.step = std::from_chars(digits.data(), digits.data() + digits.size(), i.step_number).ec ==
                 std::errc();
      }
      info_.push_back(i);
    }
  }

  void ReadSteps() {
    const EventTable& ev = trace_.events;
    const auto& template_column = ev.template_column();
    for (size_t i = 0; i < ev.size(); ++i) {
      const TemplateInfo& t = info_[template_column[i]];
      if (!t.step) continue;
      const auto [ts, end] = Rounded(i);
      steps_.push_back({ts, end, t.step_number});
      step_numbers_.push_back(t.step_number);
    }
    std::sort(step_numbers_.begin(), step_numbers_.end());
    step_numbers_.erase(std::unique(step_numbers_.begin(), step_numbers_.end()),
                        step_numbers_.end());
  }

  // HTA's round_down_time_stamps: end = ts + dur in doubles, then ceil(ts) and floor(end).
  std::pair<int64_t, int64_t> Rounded(size_t i) const {
    const EventTable& ev = trace_.events;
    const double ts_us = MicrosAsPythonFloat(ev.ts(i));
    return {SaturatingInt64(std::ceil(ts_us)),
            SaturatingInt64(std::floor(ts_us + static_cast<double>(ev.dur(i)) / 1000.0))};
  }

  int64_t Int(size_t event, KnownArg arg) const {
    // HTA's to_numeric(errors="coerce") then fillna(-1); doubles truncated.
    return model_.args().Int(event, arg).value_or(-1);
  }

  // The step of the host call that launched device work with this correlation: HTA's
  // transform_correlation_to_index maps a correlation to the last host event that has it, so
  // the model's last candidate among the runtime calls, host ones only (no stream).
  int64_t StepOfLaunch(int64_t correlation, const StepTimeline& timeline) const {
    const std::span<const uint32_t> calls = model_.links().RuntimeCallsWithCorrelation(correlation);
    for (size_t k = calls.size(); k-- > 0;) {
      const uint32_t e = model_.ids().runtime.event[calls[k]];
      const TemplateInfo& t = info_[trace_.events.template_column()[e]];
      const int64_t stream = Int(e, KnownArg::kStream);
      if (!t.kept || OnDevice(t, stream, correlation)) continue;
      return stream < 0 || (stream == 0 && t.cpu_op) ? timeline.StepAt(Rounded(e).first) : kNoStep;
    }
    return kNoStep;
  }

  // HTA's GPUKernelFilter: on a stream with a correlation, or a device-wide synchronization.
  static bool OnDevice(const TemplateInfo& t, int64_t stream, int64_t correlation) {
    return (stream >= 0 && correlation >= 0) || t.sync;
  }

  const Trace& trace_;
  const EventModel& model_;
  std::vector<TemplateInfo> info_;
  std::vector<HtaStep> steps_;
  std::vector<int64_t> step_numbers_;
};

std::string Label(const char* role, const Trace& trace) {
  std::string label = std::string(role) + " trace";
  if (!trace.source_path.empty()) label += " " + trace.source_path;
  return label;
}

// Sums the chosen step's events per name; returns an error when the step is not in the trace.
Result<std::map<std::string, NameTotals>> Summarize(const char* role, const Trace& trace,
                                                    const DiffStep& choice,
                                                    const TraceDiffOptions& options,
                                                    std::vector<std::string>* notes) {
  const DiffSide side(trace);
  bool whole = choice.kind == DiffStep::Kind::kWhole;
  int64_t step = choice.number;
  if (choice.kind == DiffStep::Kind::kFirst) {
    if (side.step_numbers().empty()) {
      whole = true;
      notes->push_back(Label(role, trace) +
                       " has no ProfilerStep: its whole trace is compared (HTA refuses it)");
    } else {
      step = side.step_numbers().front();
    }
  } else if (choice.kind == DiffStep::Kind::kNumber &&
             !std::binary_search(side.step_numbers().begin(), side.step_numbers().end(), step)) {
    std::string known;
    for (int64_t s : side.step_numbers()) known += (known.empty() ? "" : ", ") + std::to_string(s);
    return Error{Label(role, trace) + " has no ProfilerStep#" + std::to_string(step) +
                 (known.empty() ? " (it has no steps)" : " (its steps: " + known + ")")};
  }
  if (!whole) notes->push_back(Label(role, trace) + ": ProfilerStep#" + std::to_string(step));

  const auto by_id = side.Totals(whole, step, options.device);
  std::map<std::string, NameTotals> totals;
  for (const auto& [id, t] : by_id) {
    std::string name(trace.str(id));
    NameTotals& into = totals[options.short_names ? ShortenName(name) : name];
    into.counts += t.counts;
    into.total_duration += t.total_duration;
  }
  return totals;
}

}  // namespace

Result<DiffDevice> ParseDiffDevice(std::string_view text) {
  if (text == "all") return DiffDevice::kAll;
  if (text == "cpu") return DiffDevice::kCpu;
  if (text == "gpu") return DiffDevice::kGpu;
  return Error{"unknown device '" + std::string(text) + "' (all, cpu or gpu)"};
}

Result<DiffStep> ParseDiffStep(std::string_view text) {
  if (text == "first") return DiffStep{};
  if (text == "whole") return DiffStep{DiffStep::Kind::kWhole, 0};
  DiffStep step{DiffStep::Kind::kNumber, 0};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), step.number);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return Error{"bad step '" + std::string(text) + "' (a ProfilerStep number, first or whole)"};
  return step;
}

std::string ShortenName(std::string_view name) {
  // "(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)"
  for (std::string_view memory : {"Memcpy", "hipMemcpy", "Memset", "hipMemset", "dma"})
    if (name.substr(0, memory.size()) == memory) return std::string(name);
  if (name.find('<') == std::string_view::npos && name.find('(') == std::string_view::npos)
    return std::string(name);
  std::string stack;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '-' && i + 1 < name.size() && name[i + 1] == '>') {
      ++i;  // HTA removes every "->" first
      continue;
    }
    char c = name[i];
    if (c == '>' || c == ')') {
      char open = c == '>' ? '<' : '(';
      while (!stack.empty() && stack.back() != open) stack.pop_back();
      if (!stack.empty()) stack.pop_back();
    } else {
      stack.push_back(c);
    }
  }
  size_t space = stack.rfind(' ');
  return space == std::string::npos ? stack : stack.substr(space + 1);
}

Status CheckDiffSort(std::string_view key) {
  std::string keys;
  for (const char* k : kDiffSortKeys) {
    if (key == k) return Status::Ok();
    keys += (keys.empty() ? "" : ", ") + std::string(k);
  }
  return Error{"unknown sort '" + std::string(key) + "' (" + keys + ")"};
}

AnalysisRows SelectDiffRows(const AnalysisRows& rows, const DiffRowSelection& selection) {
  const std::string& key = selection.sort;
  const bool by_name = key == "name" || key == rows.columns[0];
  const bool by_change = key.starts_with("diff_");
  const std::string floor_column =
      key.find("counts") != std::string::npos ? "diff_counts" : "diff_duration";
  const size_t sort_column = by_name ? 0 : rows.Column(key);
  const size_t floor_at = rows.Column(floor_column);
  auto value = [&](size_t r, size_t column) {
    const Cell c = rows.rows.cell(r, column);
    return c.kind == Cell::Kind::kInt ? static_cast<double>(c.int_value) : c.double_value;
  };
  std::vector<uint32_t> kept;
  size_t below_floor = 0;
  for (size_t r = 0; r < rows.rows.size(); ++r) {
    if (selection.min_change > 0 && std::fabs(value(r, floor_at)) < selection.min_change) {
      ++below_floor;
      continue;
    }
    kept.push_back(static_cast<uint32_t>(r));
  }
  // The rows come sorted by name; a stable sort keeps that order among equal keys.
  if (!by_name) {
    std::stable_sort(kept.begin(), kept.end(), [&](uint32_t a, uint32_t b) {
      const double x = value(a, sort_column), y = value(b, sort_column);
      if (by_change && std::fabs(x) != std::fabs(y)) return std::fabs(x) > std::fabs(y);
      return x > y;
    });
  }
  const size_t before_limit = kept.size();
  if (selection.row_limit > 0 && kept.size() > selection.row_limit)
    kept.resize(selection.row_limit);
  AnalysisRows out = rows.Select(kept);
  if (!by_name) {
    out.notes.push_back("sorted by " +
                        (by_change ? "the size of " + key + " (test - control)" : key) +
                        ", largest first");
  }
  if (below_floor > 0) {
    char floor[64];
    std::snprintf(floor, sizeof floor, "%g", selection.min_change);
    out.notes.push_back(std::to_string(below_floor) + " of " + std::to_string(rows.rows.size()) +
                        " rows left out: |" + floor_column + "| below " + floor +
                        (floor_column == "diff_counts" ? "" : " us"));
  }
  if (kept.size() < before_limit) {
    out.notes.push_back(std::to_string(kept.size()) + " of " + std::to_string(before_limit) +
                        " rows shown (row limit)");
  }
  return out;
}

Result<AnalysisRows> DiffTraces(const Trace& control, const Trace& test,
                                const TraceDiffOptions& options) {
  AnalysisRows rows;
  auto control_totals = Summarize("control", control, options.control_step, options, &rows.notes);
  if (!control_totals.ok()) return control_totals.error();
  auto test_totals = Summarize("test", test, options.test_step, options, &rows.notes);
  if (!test_totals.ok()) return test_totals.error();

  rows.columns = {options.short_names ? "short_name" : "name",
                  "control_counts",
                  "control_total_duration",
                  "test_counts",
                  "test_total_duration",
                  "diff_counts",
                  "diff_duration",
                  "counts_change_categories",
                  "change"};
  std::map<std::string, std::pair<NameTotals, NameTotals>> joined;
  for (const auto& [name, t] : *control_totals) joined[name].first = t;
  for (const auto& [name, t] : *test_totals) joined[name].second = t;
  for (const auto& [name, pair] : joined) {
    const NameTotals& c = pair.first;
    const NameTotals& t = pair.second;
    const int64_t diff_counts = t.counts - c.counts;
    // ops_diff's five groups; with counts >= 1 on at least one side they partition the names.
    const char* change = c.counts == 0     ? "added"
                         : t.counts == 0   ? "deleted"
                         : diff_counts > 0 ? "increased"
                         : diff_counts < 0 ? "decreased"
                                           : "unchanged";
    rows.rows.push_back({Cell::Text(name), Cell::Int(c.counts), Cell::Int(c.total_duration),
                         Cell::Int(t.counts), Cell::Int(t.total_duration), Cell::Int(diff_counts),
                         Cell::Int(t.total_duration - c.total_duration),
                         Cell::Text(diff_counts > 0   ? "+"
                                    : diff_counts < 0 ? "-"
                                                      : "="),
                         Cell::Text(change)});
  }
  if (rows.rows.empty()) rows.notes.push_back("no events to compare in the chosen steps");
  return rows;
}

}  // namespace profsh
