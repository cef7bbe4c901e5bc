#include "engine/trace/import_repairs.h"

namespace profsh {

namespace {

struct RepairKind {
  // Perfetto's stats name where Perfetto counts the same thing; otherwise profsh's, in the same
  // style (docs/ANALYSIS.md, "What the JSON reader accepts").
  const char* stat_name;
  const char* description;
  bool data_lost = false;  // dropped, rather than read another way
};

constexpr RepairKind kKinds[] = {
    {"json_number_as_string", "numbers written as strings (\"ts\": \"5.1\") read as numbers"},
    {"json_id_as_string", "pids or tids written as strings of digits read as integers"},
    {"json_long_phase", "phases ('ph') longer than one letter read as their first letter"},
    {"json_tokenizer_failure", "events without a phase ('ph') dropped", true},
    {"json_empty_event", "empty event objects ({}) skipped"},
    {"json_tokenizer_failure", "events without a timestamp ('ts') dropped", true},
    {"json_tokenizer_failure", "events whose 'ts' or 'dur' string is not a number dropped", true},
    {"json_parser_failure",
     "complete ('X') events without 'dur' dropped ('tdur' is thread time, not a duration)", true},
    {"json_missing_pid", "events without 'pid' given pid 0"},
    {"json_missing_tid", "events without 'tid' placed on thread tid = pid"},
    {"json_trailing_comma", "trailing commas before a closing bracket ignored"},
    {"json_missing_comma", "missing commas between events supplied"},
    {"json_control_character", "raw control characters inside strings kept"},
    {"json_trace_truncated",
     "trace cut short: every whole event before the cut kept, the rest of the file missing", true},
    {"unmatched_end_event", "end ('E') events that matched no open begin ('B') dropped", true},
    {"misplaced_end_event",
     "end ('E') events that ended a begin ('B') with begins still open inside it; those ended "
     "with it"},
    {"unterminated_begin_event",
     "begin ('B') events never ended; they run to the end of the trace"},
};
static_assert(std::size(kKinds) == static_cast<size_t>(Repair::kCount));

}  // namespace

bool ImportRepairs::empty() const {
  for (const Counter& c : counters_)
    if (c.count > 0) return false;
  return true;
}

void ImportRepairs::Publish(Trace& trace) const {
  for (size_t k = 0; k < counters_.size(); ++k) {
    const Counter& c = counters_[k];
    if (c.count == 0) continue;
    Trace::ImportStat stat;
    stat.name = kKinds[k].stat_name;
    stat.count = c.count;
    stat.first_place = (c.place == Place::kByte ? "byte " : "event ") + std::to_string(c.where);
    stat.description = kKinds[k].description;
    stat.data_lost = kKinds[k].data_lost;
    trace.warnings.push_back(std::to_string(c.count) + " " + stat.description + " (first at " +
                             stat.first_place + ")");
    trace.import_stats.push_back(std::move(stat));
  }
}

}  // namespace profsh
