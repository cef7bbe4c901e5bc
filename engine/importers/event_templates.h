// Event templates: the shapes of events already parsed, so that the next event with the same
// shape costs a few memcmp calls instead of a full tokenization.
//
// A trace repeats itself: thousands of events differ from each other only in their name,
// timestamps and a few ids. A template is the exact text of an event with holes where those
// varied (the name string, "ts", "dur" and the inline argument numbers). An event that matches a
// template byte for byte outside the holes is as valid as the event the template was made from,
// has the same fields, category, process, thread and argument schema, so only the holes are
// parsed. Anything that does not match goes through the general tokenizer, which also records a
// new template.
//
// Lookup is in two steps: the event's first 16 bytes find its prefix (the text before the first
// hole, usually up to the name); the prefix and the first hole's text (the name) find up to four
// candidate shapes for the rest. Names whose events rarely repeat stop being tried.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/trace/trace.h"

namespace profsh {

enum class HoleKind : uint8_t { kName, kTs, kDur, kInline };

struct Hole {
  HoleKind kind = HoleKind::kName;
  uint8_t inline_type = 0;  // for kInline: ArgType, | 0x80 when the value takes two words
};

// A hole as seen in the input while parsing an event generically.
struct RecordedHole {
  const char* begin;
  const char* end;
  Hole hole;
};

// Everything about an event that a matching event shares.
struct EventShape {
  std::vector<std::string> pieces;  // text after hole i (i >= 0): pieces[i] follows holes[i]
  std::vector<Hole> holes;          // holes[0] is the prefix's first hole
  char phase = 0;
  std::string category;
  Ident pid, tid;
  bool has_ts = false;
  bool has_dur = false;
  uint32_t schema = 0;  // the argument schema; TraceBuilder::kNoArgs when none
};

class EventTemplates {
 public:
  static constexpr size_t kKeyBytes = 16;

  struct Prefix {
    std::string text;
    bool has_hole = false;
    Hole first;
  };

  // The prefix that starts `input` (which begins at the event's '{'), or nullptr.
  const Prefix* FindPrefix(const char* input, const char* end, uint32_t* prefix_id);
  // Candidate shapes for an event with this prefix whose first hole's text is `first_hole`.
  std::span<const int32_t> Candidates(uint32_t prefix_id, std::string_view first_hole);
  const EventShape& shape(int32_t id) const { return shapes_[id]; }
  // Reports the outcome of trying the candidates, for ordering and for giving up on names whose
  // events never repeat.
  void Matched(uint32_t prefix_id, std::string_view first_hole, int32_t shape_id);
  void Missed(uint32_t prefix_id, std::string_view first_hole);

  // Records the shape of a generically parsed event spanning [begin, end).
  void Remember(const char* begin, const char* end, std::span<const RecordedHole> holes,
                EventShape constants);

  size_t size() const { return shapes_.size(); }

 private:
  static constexpr size_t kPrefixesPerKey = 8;
  static constexpr size_t kShapesPerKey = 4;
  static constexpr size_t kMaxShapes = 1 << 15;

  struct ShapeSlots {
    std::array<int32_t, kShapesPerKey> ids;
    uint32_t count = 0;
    uint32_t attempts = 0;
    uint32_t hits = 0;
    bool enabled() const { return attempts < 64 || hits * 2 >= attempts; }
  };
  struct PrefixSlots {
    std::array<int32_t, kPrefixesPerKey> ids;
    uint32_t count = 0;
  };
  static uint64_t ShapeKey(uint32_t prefix_id, std::string_view first_hole);

  std::vector<Prefix> prefixes_;
  std::unordered_map<uint64_t, PrefixSlots> prefix_index_;  // hash of the first kKeyBytes
  std::vector<EventShape> shapes_;
  std::unordered_map<uint64_t, ShapeSlots> shape_index_;
};

}  // namespace profsh
