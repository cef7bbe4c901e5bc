#include "engine/trace/args.h"

#include <cstring>

#include "engine/util/hash.h"

namespace profsh {

namespace {

// flags word: type (bits 0-7), top_level (bit 8), inline (bit 9), inline word count (bits 10-11)
uint32_t PackFlags(const SchemaField& f) {
  uint32_t words = f.inline_value ? ArgStore::InlineWords(f.value) : 0;
  return static_cast<uint32_t>(f.value.type) | (f.top_level ? 1u << 8 : 0) |
         (f.inline_value ? 1u << 9 : 0) | (words << 10);
}

void PackValue(const SchemaField& f, uint32_t* lo, uint32_t* hi) {
  uint64_t bits = 0;
  if (!f.inline_value) {
    switch (f.value.type) {
      case ArgType::kBool:
        bits = f.value.bool_value;
        break;
      case ArgType::kInt:
      case ArgType::kUInt:
        bits = static_cast<uint64_t>(f.value.int_value);
        break;
      case ArgType::kDouble:
        std::memcpy(&bits, &f.value.double_value, 8);
        break;
      case ArgType::kString:
      case ArgType::kJson:
        bits = f.value.str;
        break;
      case ArgType::kNull:
        break;
    }
  }
  *lo = static_cast<uint32_t>(bits);
  *hi = static_cast<uint32_t>(bits >> 32);
}

ArgValue DecodeValue(ArgType type, uint64_t bits) {
  ArgValue v;
  v.type = type;
  switch (type) {
    case ArgType::kBool:
      v.bool_value = bits != 0;
      break;
    case ArgType::kInt:
    case ArgType::kUInt:
      v.int_value = static_cast<int64_t>(bits);
      break;
    case ArgType::kDouble:
      std::memcpy(&v.double_value, &bits, 8);
      break;
    case ArgType::kString:
    case ArgType::kJson:
      v.str = static_cast<uint32_t>(bits);
      break;
    case ArgType::kNull:
      break;
  }
  return v;
}

}  // namespace

ArgStore::ArgStore() {
  schema_slots_.assign(256, 0);
}

uint32_t ArgStore::InlineWords(const ArgValue& v) {
  if (v.type == ArgType::kInt && v.int_value >= INT32_MIN && v.int_value <= INT32_MAX) return 1;
  return 2;
}

uint64_t ArgStore::HashSchema(const uint32_t* words, size_t n) const {
  return HashBytes(reinterpret_cast<const char*>(words), n * sizeof(uint32_t));
}

void ArgStore::Rehash() {
  std::vector<uint32_t> slots(schema_slots_.size() * 2, 0);
  uint64_t mask = slots.size() - 1;
  for (uint32_t id = 0; id < schema_offsets_.size(); ++id) {
    const uint32_t* w = &schema_words_[schema_offsets_[id]];
    uint64_t pos = HashSchema(w, 1 + w[0] * kWordsPerField) & mask;
    while (slots[pos] != 0) pos = (pos + 1) & mask;
    slots[pos] = id + 1;
  }
  schema_slots_.swap(slots);
}

uint32_t ArgStore::AddSchema(std::span<const SchemaField> fields) {
  uint32_t scratch_stack[1 + 16 * kWordsPerField];
  std::vector<uint32_t> scratch_heap;
  size_t n = 1 + fields.size() * kWordsPerField;
  uint32_t* words = scratch_stack;
  if (n > std::size(scratch_stack)) {
    scratch_heap.resize(n);
    words = scratch_heap.data();
  }
  words[0] = static_cast<uint32_t>(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    uint32_t* w = words + 1 + i * kWordsPerField;
    w[0] = fields[i].key;
    w[1] = PackFlags(fields[i]);
    PackValue(fields[i], &w[2], &w[3]);
  }
  uint64_t mask = schema_slots_.size() - 1;
  uint64_t pos = HashSchema(words, n) & mask;
  while (true) {
    uint32_t slot = schema_slots_[pos];
    if (slot == 0) break;
    const uint32_t* existing = &schema_words_[schema_offsets_[slot - 1]];
    if (existing[0] == words[0] && std::memcmp(existing, words, n * sizeof(uint32_t)) == 0) {
      return slot - 1;
    }
    pos = (pos + 1) & mask;
  }
  uint32_t id = static_cast<uint32_t>(schema_offsets_.size());
  schema_offsets_.push_back(static_cast<uint32_t>(schema_words_.size()));
  schema_words_.insert(schema_words_.end(), words, words + n);
  schema_slots_[pos] = id + 1;
  if (schema_offsets_.size() * 2 > schema_slots_.size()) Rehash();
  return id;
}

uint32_t ArgStore::InlineWordCount(const uint32_t* s) {
  uint32_t words = 0;
  for (uint32_t f = 0; f < s[0]; ++f) {
    uint32_t flags = s[1 + f * kWordsPerField + 1];
    if ((flags >> 9) & 1) words += (flags >> 10) & 3;
  }
  return words;
}

ArgValue ArgStore::InlineValue(ArgType type, const uint32_t* words, uint32_t nwords) {
  // One word: an int that fits in 32 bits, sign-extended.
  const uint64_t bits =
      nwords == 1 ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(words[0])))
                  : static_cast<uint64_t>(words[0]) | (static_cast<uint64_t>(words[1]) << 32);
  return DecodeValue(type, bits);
}

SchemaField ArgStore::field(uint32_t schema, size_t index) const {
  const uint32_t* w = &schema_words_[schema_offsets_[schema] + 1 + index * kWordsPerField];
  SchemaField f;
  f.key = w[0];
  f.top_level = (w[1] >> 8) & 1;
  f.inline_value = (w[1] >> 9) & 1;
  f.inline_words = static_cast<uint8_t>((w[1] >> 10) & 3);
  f.value = DecodeValue(static_cast<ArgType>(w[1] & 0xff),
                        static_cast<uint64_t>(w[2]) | (static_cast<uint64_t>(w[3]) << 32));
  return f;
}

ArgStore::View::View(const ArgStore* store, ArgRef ref) : store_(store) {
  if (ref.empty()) return;
  const uint32_t* s = &store->schema_words_[store->schema_offsets_[ref.schema()]];
  count_ = s[0];
  schema_ = s + 1;
  inline_ = store->arena_.data() + ref.offset;
}

ArgStore::View::Item ArgStore::View::Iterator::operator*() const {
  const uint32_t* w = view_->schema_ + index_ * kWordsPerField;
  Item item;
  item.key = w[0];
  item.top_level = (w[1] >> 8) & 1;
  ArgType type = static_cast<ArgType>(w[1] & 0xff);
  if ((w[1] >> 9) & 1) {
    item.value = InlineValue(type, view_->inline_ + word_, (w[1] >> 10) & 3);
  } else {
    item.value =
        DecodeValue(type, static_cast<uint64_t>(w[2]) | (static_cast<uint64_t>(w[3]) << 32));
  }
  return item;
}

ArgStore::View::Iterator& ArgStore::View::Iterator::operator++() {
  const uint32_t* w = view_->schema_ + index_ * kWordsPerField;
  if ((w[1] >> 9) & 1) word_ += (w[1] >> 10) & 3;
  ++index_;
  return *this;
}

bool ArgStore::View::Find(uint32_t key, ArgValue* out, bool top_level) const {
  size_t word = 0;
  for (size_t i = 0; i < count_; ++i) {
    const uint32_t* w = schema_ + i * kWordsPerField;
    bool is_top = (w[1] >> 8) & 1;
    if (w[0] == key && is_top == top_level) {
      *out = (*Iterator(this, i, word)).value;
      return true;
    }
    if ((w[1] >> 9) & 1) word += (w[1] >> 10) & 3;
  }
  return false;
}

size_t ArgStore::MemoryBytes() const {
  return (schema_words_.capacity() + schema_offsets_.capacity() + schema_slots_.capacity()) *
             sizeof(uint32_t) +
         HeldBytes(arena_);
}

void ArgStore::Assign(std::vector<uint32_t> schema_words, std::vector<uint32_t> schema_offsets,
                      LargeVector<uint32_t> arena) {
  schema_words_ = std::move(schema_words);
  schema_offsets_ = std::move(schema_offsets);
  arena_ = std::move(arena);
  size_t slots = 256;
  while (slots < schema_offsets_.size() * 2 + 2) slots *= 2;
  schema_slots_.assign(slots / 2, 0);
  Rehash();
}

}  // namespace profsh
