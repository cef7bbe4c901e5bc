// Levenshtein distance, for "did you mean" hints on mistyped names (options, sort keys, rows).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace profsh {

inline size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The candidate closest to `typed`, if it is close enough to be what was meant (fewer than
// `limit` edits); empty otherwise.
template <typename Candidates>
std::string ClosestName(std::string_view typed, const Candidates& candidates, size_t limit = 4) {
  std::string best;
  size_t best_distance = limit;
  for (const auto& c : candidates) {
    size_t d = EditDistance(typed, c);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(c);
    }
  }
  return best;
}

}  // namespace profsh
