// What a stream's metadata blocks defined: strings by id, NVTX/ITT domains, categories and
// counters. The decoder fills it; the emitter names events with it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace profsh {

struct StreamNames {
  struct Counter {
    std::string name;  // "domain/name" when the counter has a domain
    uint8_t type = 0;  // stream::CounterType
  };
  // Ids are dense below kDenseIds (the collector's table holds 2^20 strings); a larger id, which
  // only a corrupt or crafted stream names, goes to a map instead of sizing the vector after it.
  static constexpr uint64_t kDenseIds = uint64_t{1} << 22;
  std::vector<std::string> strings;
  std::vector<bool> has_string;
  std::unordered_map<uint64_t, std::string> sparse_strings;
  std::unordered_map<uint64_t, std::string> domains;
  std::map<std::pair<uint64_t, uint64_t>, std::string> categories;  // (domain, id)
  std::unordered_map<uint64_t, Counter> counters;

  void DefineString(uint64_t id, std::string text) {
    if (id >= kDenseIds) {
      sparse_strings[id] = std::move(text);
      return;
    }
    if (id >= strings.size()) {
      strings.resize(id + 1);
      has_string.resize(id + 1, false);
    }
    strings[id] = std::move(text);
    has_string[id] = true;
  }
  bool Known(uint64_t id) const {
    return id < kDenseIds ? id < strings.size() && has_string[id] : sparse_strings.count(id) != 0;
  }
  std::string_view Text(uint64_t id) const {
    if (id < strings.size() && has_string[id]) return strings[id];
    if (id >= kDenseIds) {
      auto it = sparse_strings.find(id);
      if (it != sparse_strings.end()) return it->second;
    }
    return "<profsh: unknown string>";
  }
  std::string DomainName(uint64_t domain) const {
    auto it = domains.find(domain);
    return it == domains.end() ? "domain " + std::to_string(domain) : it->second;
  }
};

}  // namespace profsh
