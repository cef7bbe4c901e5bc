// Fast reads of a few well-known arguments ("External id", "Input Dims", ...) from millions of
// events: where each key sits is worked out once per argument schema, so a read is two array
// lookups instead of a scan of the event's fields.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/trace/trace.h"

namespace profsh {

class ArgReader {
 public:
  ArgReader(const Trace& trace, std::initializer_list<std::string_view> keys);

  // Reads key number `key` (its position in the constructor's list) of an event's args.
  bool Get(ArgRef args_ref, size_t key, ArgValue* out) const {
    if (args_ref.empty()) return false;
    const uint32_t schema = args_ref.schema();
    const Slot& slot = slots_[schema * key_count_ + key];
    if (slot.field < 0) return false;
    if (slot.inline_words == 0) {
      *out = trace_.args.field(schema, static_cast<size_t>(slot.field)).value;
      return true;
    }
    const uint32_t* w =
        trace_.args.arena().data() + args_ref.offset + static_cast<uint32_t>(slot.inline_word);
    uint64_t bits = slot.inline_words == 1
                        ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(w[0])))
                        : static_cast<uint64_t>(w[0]) | (static_cast<uint64_t>(w[1]) << 32);
    out->type = slot.type;
    if (slot.type == ArgType::kDouble) {
      std::memcpy(&out->double_value, &bits, 8);
    } else {
      out->int_value = static_cast<int64_t>(bits);
    }
    return true;
  }
  // The value of a key that is a schema constant (not inline), for every event of the schema.
  bool GetSchemaConstant(uint32_t schema, size_t key, ArgValue* out) const {
    const Slot& slot = slots_[schema * key_count_ + key];
    if (slot.field < 0 || slot.inline_words != 0) return false;
    *out = trace_.args.field(schema, static_cast<size_t>(slot.field)).value;
    return true;
  }
  // Where an integer key that every event of the schema keeps inline sits among the event's
  // words, so that a caller reading millions of events can read it directly; false otherwise.
  bool InlineIntSlot(uint32_t schema, size_t key, uint32_t* word, uint32_t* words) const {
    const Slot& slot = slots_[schema * key_count_ + key];
    if (slot.field < 0 || slot.inline_words == 0 ||
        (slot.type != ArgType::kInt && slot.type != ArgType::kUInt))
      return false;
    *word = static_cast<uint32_t>(slot.inline_word);
    *words = slot.inline_words;
    return true;
  }
  bool GetInt(ArgRef args_ref, size_t key, int64_t* out) const {
    ArgValue v;
    if (!Get(args_ref, key, &v) || !v.is_number()) return false;
    *out = v.AsInt();
    return true;
  }

 private:
  struct Slot {
    int32_t field = -1;        // field index in the schema, -1 when absent
    int32_t inline_word = 0;   // offset of the value among the event's inline words
    uint8_t inline_words = 0;  // 0 when the value lives in the schema
    ArgType type = ArgType::kNull;
  };
  const Trace& trace_;
  size_t key_count_;
  std::vector<Slot> slots_;  // schema * key_count_ + key
};

}  // namespace profsh
