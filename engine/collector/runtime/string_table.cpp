#include "engine/collector/runtime/string_table.h"

#include <sys/mman.h>

#include <cstring>

#include "engine/collector/runtime/raw_map.h"
#include "engine/util/hash.h"

namespace profsh::runtime {

namespace {

void* Reserve(size_t bytes) {
  void* p = RawMap(bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  return p == MAP_FAILED ? nullptr : p;
}

// Never 0: an empty slot's hash.
inline uint64_t NodeHash(const char* text, size_t length) {
  return profsh::HashBytes(text, length) | 1;
}

}  // namespace

bool StringTable::Init(uint32_t capacity, size_t arena_bytes) {
  uint64_t slots = 1;
  while (slots < uint64_t{capacity} * 2) slots <<= 1;
  slots_ = static_cast<std::atomic<StringNode*>*>(Reserve(slots * sizeof(StringNode*)));
  by_id_ =
      static_cast<std::atomic<StringNode*>*>(Reserve(uint64_t{capacity} * sizeof(StringNode*)));
  arena_ = static_cast<char*>(Reserve(arena_bytes));
  if (!slots_ || !by_id_ || !arena_) return false;
  mask_ = slots - 1;
  capacity_ = capacity;
  arena_bytes_ = arena_bytes;
  static const char kExhausted[] = "<profsh: string table full>";
  exhausted_ = Node(kExhausted, sizeof(kExhausted) - 1);  // id 0
  return exhausted_ != nullptr;
}

StringNode* StringTable::Allocate(const char* text, size_t length, uint64_t hash) {
  size_t bytes = (sizeof(StringNode) + length + 1 + 15) & ~size_t{15};
  size_t offset = arena_used_.fetch_add(bytes, std::memory_order_relaxed);
  if (offset + bytes > arena_bytes_) return nullptr;
  uint32_t id = next_id_.load(std::memory_order_relaxed);
  do {
    if (id >= capacity_) return nullptr;
  } while (!next_id_.compare_exchange_weak(id, id + 1, std::memory_order_relaxed));
  auto* node = reinterpret_cast<StringNode*>(arena_ + offset);
  std::memcpy(node->text, text, length);
  node->text[length] = '\0';
  node->hash = hash;
  node->id = id;
  node->length = static_cast<uint32_t>(length);
  node->tags = tagger_ ? tagger_(node->text, length) : 0;
  node->itt = IttStringHandleAbi{node->text, nullptr, static_cast<int>((id | node->tags) + 1),
                                 nullptr, nullptr};
  by_id_[id].store(node, std::memory_order_release);
  return node;
}

StringNode* StringTable::Node(const char* text, size_t length) {
  if (length > 0xffffff) length = 0xffffff;  // 16 MB of one name is someone's bug: cut it
  const uint64_t hash = NodeHash(text, length);
  StringNode* mine = nullptr;
  for (uint64_t i = hash & mask_, probes = 0; probes <= mask_; i = (i + 1) & mask_, ++probes) {
    StringNode* node = slots_[i].load(std::memory_order_acquire);
    if (node == nullptr) {
      if (mine == nullptr) mine = Allocate(text, length, hash);
      if (mine == nullptr) break;
      if (slots_[i].compare_exchange_strong(node, mine, std::memory_order_acq_rel)) return mine;
      // Another thread filled this slot first; `node` is now what it stored.
    }
    if (node->hash == hash && node->length == length &&
        std::memcmp(node->text, text, length) == 0) {
      // If we had allocated a node for the same text, it stays unreferenced: its id is
      // published (the drain thread defines it) but no event uses it.
      return node;
    }
  }
  overflows_.fetch_add(1, std::memory_order_relaxed);
  return exhausted_;
}

}  // namespace profsh::runtime
