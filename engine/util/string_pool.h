// Interned strings: every name, category, argument key and string value of a trace is stored
// once and referred to by a 32-bit id. Id 0 is the empty string.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace profsh {

class StringPool {
 public:
  StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;

  uint32_t Intern(std::string_view s);
  uint32_t InternHashed(std::string_view s, uint64_t hash);
  std::optional<uint32_t> Find(std::string_view s) const;

  std::string_view Get(uint32_t id) const {
    const Entry& e = entries_[id];
    return std::string_view(e.data, e.size);
  }
  uint32_t size() const { return static_cast<uint32_t>(entries_.size()); }
  size_t MemoryBytes() const;
  size_t TotalStringBytes() const { return total_bytes_; }

 private:
  struct Entry {
    const char* data;
    uint32_t size;
    uint32_t hash32;
  };
  const char* Store(std::string_view s);
  void Grow();

  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0;
  size_t block_capacity_ = 0;
  size_t block_bytes_ = 0;
  size_t total_bytes_ = 0;
  std::vector<Entry> entries_;
  std::vector<uint32_t> slots_;  // id + 1; 0 marks an empty slot
  uint64_t mask_ = 0;
};

}  // namespace profsh
