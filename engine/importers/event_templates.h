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
#include <vector>

#include "engine/trace/trace.h"

namespace profsh {

enum class HoleKind : uint8_t { kName, kTs, kDur, kInline };

struct Hole {
  HoleKind kind = HoleKind::kName;
  uint8_t inline_type = 0;  // for kInline: ArgType, | 0x80 when the value takes two words

  static uint8_t InlineType(const ArgValue& v) {
    return static_cast<uint8_t>(v.type) | (ArgStore::InlineWords(v) == 2 ? 0x80 : 0);
  }
  // The hole of an inline number of v's type.
  static Hole Inline(const ArgValue& v) { return {HoleKind::kInline, InlineType(v)}; }
};

// A hole as seen in the input while parsing an event generically.
struct RecordedHole {
  const char* begin;
  const char* end;
  Hole hole;
};

// Everything about an event that a matching event shares.
struct EventShape {
  // Hole i is followed by piece i: text[parts[i - 1].piece_end, parts[i].piece_end). Pieces and
  // holes sit in two allocations, so a match follows few pointers.
  struct Part {
    Hole hole;
    uint32_t piece_end = 0;
  };
  std::vector<Part> parts;  // parts[0].hole is the prefix's first hole
  std::string text;
  bool has_name_hole = false;
  char phase = 0;
  std::string category;
  Ident pid, tid;
  bool has_ts = false;
  bool has_dur = false;
  uint32_t schema = 0;  // the argument schema; TraceBuilder::kNoArgs when none
  // The trace's EventTemplate of the last event committed with this shape, and its name (in the
  // trace's string pool). Only the name can differ between two events of one shape, so the next
  // one reuses the template once its name compares equal.
  uint32_t last_event_template = UINT32_MAX;
  std::string_view last_name;
};

class EventTemplates {
 public:
  static constexpr size_t kKeyBytes = 16;
  static constexpr size_t kShapesPerKey = 4;

  struct Prefix {
    std::string text;
    bool has_hole = false;
    Hole first;
  };

  // The prefix that starts `input` (which begins at the event's '{'), or nullptr.
  const Prefix* FindPrefix(const char* input, const char* end, uint32_t* prefix_id);
  // Up to kShapesPerKey shapes of events that share a prefix and a name, most recently used first.
  struct ShapeSlots {
    std::array<int32_t, kShapesPerKey> ids;
    uint32_t count = 0;
    uint32_t attempts = 0;
    uint32_t hits = 0;
    bool enabled() const { return attempts < 64 || hits * 2 >= attempts; }
  };
  // The candidate shapes for an event with this prefix whose first hole's text is `first_hole`,
  // or nullptr.
  ShapeSlots* Candidates(uint32_t prefix_id, std::string_view first_hole);
  static std::span<const int32_t> Ids(const ShapeSlots& slots) {
    return std::span<const int32_t>(slots.ids.data(), slots.count);
  }
  EventShape& shape(int32_t id) { return shapes_[id]; }
  // Reports the outcome of trying the candidates, for ordering and for giving up on names whose
  // events never repeat.
  static void Matched(ShapeSlots& slots, int32_t shape_id);
  static void Missed(ShapeSlots& slots) { ++slots.attempts; }

  // Records the shape of a generically parsed event spanning [begin, end).
  void Remember(const char* begin, const char* end, std::span<const RecordedHole> holes,
                EventShape constants);

  size_t size() const { return shapes_.size(); }

 private:
  static constexpr size_t kPrefixesPerKey = 8;
  static constexpr size_t kMaxShapes = 1 << 15;

  struct PrefixSlots {
    std::array<int32_t, kPrefixesPerKey> ids;
    uint32_t count = 0;
  };
  static uint64_t ShapeKey(uint32_t prefix_id, std::string_view first_hole);

  // Open addressing from a 64-bit hash to an index into a vector: one probe in the common case,
  // where std::unordered_map chases a node pointer.
  class HashIndex {
   public:
    // The index stored under `hash`, or -1.
    int32_t Find(uint64_t hash) const {
      if (slots_.empty()) return -1;
      for (size_t pos = hash & mask_;; pos = (pos + 1) & mask_) {
        const Slot& s = slots_[pos];
        if (s.index < 0 || s.hash == hash) return s.index;
      }
    }
    void Insert(uint64_t hash, int32_t index);

   private:
    struct Slot {
      uint64_t hash = 0;
      int32_t index = -1;
    };
    std::vector<Slot> slots_;
    size_t mask_ = 0, used_ = 0;
  };

  std::vector<Prefix> prefixes_;
  std::vector<PrefixSlots> prefix_slots_;
  HashIndex prefix_index_;  // hash of the first kKeyBytes -> prefix_slots_
  std::vector<EventShape> shapes_;
  std::vector<ShapeSlots> shape_slots_;
  HashIndex shape_index_;  // ShapeKey -> shape_slots_
};

}  // namespace profsh
