// Event arguments, stored so that what repeats is stored once.
//
// An args object is split into a schema and inline values. The schema (interned, shared by every
// event with the same keys and the same non-volatile values) holds keys, types and the values that
// repeat: strings, shapes, kernel launch configurations. Values that differ on nearly every event
// (ids, addresses, byte counts) are kept inline, one or two 32-bit words per event, in a flat
// arena; the event's template names its schema. Event-level JSON fields other than the core ones
// ("id", "bp", "s", "cname", ...) are stored the same way, marked as top-level fields.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine/util/large_vector.h"
#include "engine/util/saturating.h"

namespace profsh {

enum class ArgType : uint8_t {
  kNull = 0,
  kBool = 1,
  kInt = 2,   // int64
  kUInt = 3,  // uint64 above INT64_MAX
  kDouble = 4,
  kString = 5,  // decoded UTF-8, a string pool id
  kJson = 6,    // an array or object, kept as compact JSON text (string pool id)
};

struct ArgValue {
  ArgType type = ArgType::kNull;
  bool bool_value = false;
  int64_t int_value = 0;  // kInt; kUInt stores the bit pattern
  double double_value = 0;
  uint32_t str = 0;  // kString, kJson

  bool is_number() const {
    return type == ArgType::kInt || type == ArgType::kUInt || type == ArgType::kDouble;
  }
  double AsDouble() const {
    switch (type) {
      case ArgType::kInt:
        return static_cast<double>(int_value);
      case ArgType::kUInt:
        return static_cast<double>(static_cast<uint64_t>(int_value));
      case ArgType::kDouble:
        return double_value;
      case ArgType::kBool:
        return bool_value ? 1 : 0;
      default:
        return 0;
    }
  }
  // Integer view of numbers; doubles are truncated, and saturate outside int64's range (a
  // hostile or corrupt trace's 5e55), NaN giving 0.
  int64_t AsInt() const {
    return type == ArgType::kDouble ? SaturatingInt64(double_value)
           : type == ArgType::kBool ? bool_value
                                    : int_value;
  }
};

struct SchemaField {
  uint32_t key = 0;
  bool top_level = false;     // an event-level field ("id", "bp", ...), not inside "args"
  bool inline_value = false;  // value lives in the per-event arena, not in the schema
  uint8_t inline_words = 0;   // when read back from a schema: the words it takes per event
  ArgValue value;             // the value for non-inline fields; the type for inline ones
};

// One event's arguments: its schema and where its inline words start in the arena.
struct ArgRef {
  uint32_t schema_plus_one = 0;  // 0: no arguments
  uint32_t offset = 0;

  bool empty() const { return schema_plus_one == 0; }
  uint32_t schema() const { return schema_plus_one - 1; }
};

class ArgStore {
 public:
  ArgStore();

  // Interns a schema; fields of inline values carry only their type.
  uint32_t AddSchema(std::span<const SchemaField> fields);
  // Appends one event's inline words and returns its reference.
  ArgRef Append(uint32_t schema, std::span<const uint32_t> inline_words) {
    ArgRef ref{schema + 1, static_cast<uint32_t>(arena_.size())};
    arena_.insert(arena_.end(), inline_words.begin(), inline_words.end());
    return ref;
  }

  uint32_t schema_count() const { return static_cast<uint32_t>(schema_offsets_.size()); }
  size_t field_count(uint32_t schema) const { return schema_words_[schema_offsets_[schema]]; }
  SchemaField field(uint32_t schema, size_t index) const;
  // The words an event keeps in the arena for a schema stored as `schema_words` ([count,
  // (key, flags, lo, hi) * count], the layout of schema_words()); the caller has checked that
  // the count's fields are there.
  static uint32_t InlineWordCount(const uint32_t* schema_words);

  // The value of an inline field of this type from its `nwords` (1 or 2) words in the arena.
  static ArgValue InlineValue(ArgType type, const uint32_t* words, uint32_t nwords);

  // Number of 32-bit words an inline value of this type takes (1 for ints that fit in int32).
  static uint32_t InlineWords(const ArgValue& v);

  // Iterates the fields of one event's args with their values resolved.
  class View {
   public:
    View(const ArgStore* store, ArgRef ref);
    size_t size() const { return count_; }
    bool empty() const { return count_ == 0; }
    // Returns field i (key, flags and value) — O(i) for the inline part, so iterate in order.
    struct Item {
      uint32_t key;
      bool top_level;
      ArgValue value;
    };
    class Iterator {
     public:
      Iterator(const View* view, size_t index, size_t word)
          : view_(view), index_(index), word_(word) {}
      Item operator*() const;
      Iterator& operator++();
      bool operator!=(const Iterator& o) const { return index_ != o.index_; }

     private:
      const View* view_;
      size_t index_;
      size_t word_;
    };
    Iterator begin() const { return Iterator(this, 0, 0); }
    Iterator end() const { return Iterator(this, count_, 0); }
    // Finds a field by key id among the "args" fields (or top-level ones); false if absent.
    bool Find(uint32_t key, ArgValue* out, bool top_level = false) const;

   private:
    friend class Iterator;
    const ArgStore* store_ = nullptr;
    const uint32_t* schema_ = nullptr;  // points at the first field's words
    const uint32_t* inline_ = nullptr;  // per-event words
    size_t count_ = 0;
  };
  View Get(ArgRef ref) const { return View(this, ref); }

  size_t arena_words() const { return arena_.size(); }
  size_t MemoryBytes() const;

  // Raw access for the binary format.
  const std::vector<uint32_t>& schema_words() const { return schema_words_; }
  const std::vector<uint32_t>& schema_offsets() const { return schema_offsets_; }
  const LargeVector<uint32_t>& arena() const { return arena_; }
  // Replaces the contents with deserialized data; the caller has validated it.
  void Assign(std::vector<uint32_t> schema_words, std::vector<uint32_t> schema_offsets,
              LargeVector<uint32_t> arena);
  void ReserveArena(size_t words) { arena_.reserve(words); }
  void ReleaseUnusedCapacity() { profsh::ReleaseUnusedCapacity(arena_); }

 private:
  static constexpr uint32_t kWordsPerField = 4;
  void Rehash();
  uint64_t HashSchema(const uint32_t* words, size_t n) const;

  std::vector<uint32_t> schema_words_;  // [count, (key, flags, lo, hi) * count] per schema
  std::vector<uint32_t> schema_offsets_;
  std::vector<uint32_t> schema_slots_;  // open addressing: schema id + 1
  LargeVector<uint32_t> arena_;
};

}  // namespace profsh
