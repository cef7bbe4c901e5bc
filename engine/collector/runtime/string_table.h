// The process's interned strings: range names, domain and thread names. Lock-free, so that
// interning may sit on a per-event path (PyTorch's ITT wrapper creates a string handle on every
// op): lookups are a hash, a probe and a compare; an insert is a bump allocation and one CAS.
// Memory comes from one reservation made at start-up; ids are dense and never reused.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace profsh::runtime {

// Laid out as ITT's __itt_string_handle, so that a node is also the handle ITT hands back to
// the application (strA points at the node's text; extra1 holds the id + 1).
struct IttStringHandleAbi {
  const char* strA;
  void* strW;
  int extra1;
  void* extra2;
  IttStringHandleAbi* next;
};

struct StringNode {
  IttStringHandleAbi itt;  // extra1 = tagged id + 1
  uint64_t hash;
  uint32_t id;
  uint32_t length;
  uint32_t tags;  // step marker / capture range (runtime.h kTag*), fixed when interned
  uint32_t reserved;
  char text[];  // NUL-terminated
};

class StringTable {
 public:
  // Reserves address space for `capacity` strings and `arena_bytes` of text. Returns false
  // (and the table stays unusable) when the reservation fails.
  bool Init(uint32_t capacity, size_t arena_bytes);

  // The id of `text` (not NUL-terminated; `length` bytes), interning it if new. Returns 0, the
  // id of "<strings exhausted>", when the table is full (counted in `overflows`).
  uint32_t Intern(const char* text, size_t length) { return Node(text, length)->id; }
  // The id with its tags, for event names.
  uint32_t InternTagged(const char* text, size_t length) {
    StringNode* n = Node(text, length);
    return n->id | n->tags;
  }
  StringNode* Node(const char* text, size_t length);
  // Computes a new string's tags; set before the first string is interned.
  void SetTagger(uint32_t (*tagger)(const char*, size_t)) { tagger_ = tagger; }

  // What the drain thread reads: ids below `published()` that have a node.
  uint32_t allocated() const { return next_id_.load(std::memory_order_acquire); }
  const StringNode* ById(uint32_t id) const { return by_id_[id].load(std::memory_order_acquire); }
  uint64_t overflows() const { return overflows_.load(std::memory_order_relaxed); }
  void ResetOverflows() { overflows_.store(0, std::memory_order_relaxed); }

  // After fork the child keeps the table as it is (ids stay valid in its own stream).

 private:
  StringNode* Allocate(const char* text, size_t length, uint64_t hash);

  std::atomic<StringNode*>* slots_ = nullptr;
  std::atomic<StringNode*>* by_id_ = nullptr;
  uint64_t mask_ = 0;
  uint32_t capacity_ = 0;
  char* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  std::atomic<size_t> arena_used_{0};
  std::atomic<uint32_t> next_id_{0};
  std::atomic<uint64_t> overflows_{0};
  StringNode* exhausted_ = nullptr;
  uint32_t (*tagger_)(const char*, size_t) = nullptr;
};

}  // namespace profsh::runtime
