// What an importer repaired or dropped to read a trace that other tools (Perfetto, catapult)
// accept but that breaks the format, counted per kind with where each kind first occurred.
// Publish() turns the counts into Trace::import_stats (under Perfetto's stats name where one
// exists) and one line of Trace::warnings per kind, so that a repaired trace never looks clean.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "engine/trace/trace.h"

namespace profsh {

enum class Repair : uint8_t {
  // The JSON reader (engine/importers/: json_tokenizer, chrome_event_schema, json_trace_importer).
  kNumberAsString,      // "ts": "5.1": read as the number
  kIdentAsString,       // "pid": "12": read as the integer
  kLongPhase,           // "ph": "XY": the first letter
  kMissingPhase,        // no (or an empty) "ph": the event is dropped
  kEmptyEvent,          // {}: skipped
  kMissingTs,           // no "ts" (other than on an 'M' event): dropped
  kBadTime,             // a "ts"/"dur" string that is no number: dropped
  kCompleteWithoutDur,  // an 'X' event without "dur" (perhaps with "tdur" only): dropped
  kMissingPid,          // no "pid": pid 0
  kMissingTid,          // no "tid": tid = pid
  kTrailingComma,       // [a, b,] or {"a": 1,}
  kMissingComma,        // }{ between two events
  kControlCharacter,    // a raw control character inside a string: kept
  kTraceCut,            // the file ends inside an event or before the closing brackets
  // Begin/end matching (engine/trace/trace_builder.cpp).
  kUnmatchedEnd,       // an 'E' that no open 'B' on its thread matches: dropped
  kMisplacedEnd,       // an 'E' that closed a 'B' with 'B's still open inside it: those end too
  kUnterminatedBegin,  // a 'B' never ended: runs to the end of the trace
  kCount,
};

class ImportRepairs {
 public:
  enum class Place : uint8_t { kByte, kEvent };

  // Counts one occurrence; the first of each kind keeps its place (a byte offset in the input,
  // or an index in traceEvents).
  void Note(Repair kind, Place place, uint64_t where) {
    Counter& c = counters_[static_cast<size_t>(kind)];
    if (c.count++ == 0) {
      c.place = place;
      c.where = where;
    }
  }
  int64_t count(Repair kind) const { return counters_[static_cast<size_t>(kind)].count; }
  bool empty() const;
  // Appends one Trace::ImportStat and one warning per kind counted, in the order of Repair.
  void Publish(Trace& trace) const;

 private:
  struct Counter {
    int64_t count = 0;
    Place place = Place::kByte;
    uint64_t where = 0;
  };
  std::array<Counter, static_cast<size_t>(Repair::kCount)> counters_{};
};

}  // namespace profsh
