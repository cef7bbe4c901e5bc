// How a recommendation names what it is about: a tally of names (operators, kernels, calls) with
// their counts and times, written longest first, and durations in the unit that reads best.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/analysis/model/event_model.h"

namespace profsh::recommendations {

// "850 ns", "12.3 µs", "4.56 ms", "1.23 s".
inline std::string FormatTime(int64_t ns) {
  char buf[48];
  const double v = static_cast<double>(ns);
  if (ns < 1000) {
    std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  } else if (ns < 1'000'000) {
    std::snprintf(buf, sizeof buf, "%.1f µs", v / 1e3);
  } else if (ns < 1'000'000'000) {
    std::snprintf(buf, sizeof buf, "%.2f ms", v / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f s", v / 1e9);
  }
  return buf;
}

// Counts and times per name (a string id of the trace, or a text made by the rule).
class Tally {
 public:
  void Add(std::string name, int64_t ns, int64_t count = 1) {
    Entry& e = entries_[std::move(name)];
    e.count += count;
    e.ns += ns;
    total_ns_ += ns;
    total_count_ += count;
  }
  bool empty() const { return entries_.empty(); }
  int64_t total_ns() const { return total_ns_; }
  int64_t total_count() const { return total_count_; }
  // "name (3×, 1.20 ms), other (1×, 40.0 µs) and 2 more", the longest first (then by name).
  // Add(name, ns, 0) adds time without a count (and may take some away).
  std::string Describe(size_t names, bool with_count = true) const {
    // A name whose time was only subtracted (a parent's self time) has nothing to show.
    std::vector<std::pair<std::string_view, Entry>> sorted;
    for (const auto& [name, e] : entries_)
      if (e.count > 0 || e.ns > 0) sorted.emplace_back(name, e);
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.second.ns != b.second.ns ? a.second.ns > b.second.ns : a.first < b.first;
    });
    std::string out;
    for (size_t i = 0; i < sorted.size() && i < names; ++i) {
      if (!out.empty()) out += ", ";
      // Kernel names run to hundreds of characters (templates); their start tells them apart.
      constexpr size_t kLongestName = 120;
      const std::string_view name = sorted[i].first;
      if (name.size() > kLongestName)
        out += std::string(name.substr(0, kLongestName)) + "…";
      else
        out += name;
      out += " (";
      if (with_count) out += std::to_string(sorted[i].second.count) + "×, ";
      out += FormatTime(sorted[i].second.ns) + ")";
    }
    if (sorted.size() > names) out += " and " + std::to_string(sorted.size() - names) + " more";
    return out;
  }

 private:
  struct Entry {
    int64_t count = 0, ns = 0;
  };
  std::unordered_map<std::string, Entry> entries_;
  int64_t total_ns_ = 0, total_count_ = 0;
};

// The operator a user called that led to runtime call r: the outermost CPU operator open on its
// thread when it started (aten::to rather than the aten::copy_ inside it; ProfilerStep#N ranges
// are passed over), else the innermost range (an annotation), else "(no operator)".
inline std::string OperatorOfRuntime(const EventModel& model, size_t runtime,
                                     std::vector<uint32_t>* scratch) {
  model.EnclosingRanges(runtime, scratch);
  const Trace& trace = model.trace();
  for (uint32_t r : *scratch) {
    const uint32_t event = model.ids().ranges.event[r];
    const TemplateRole& role = model.role(event);
    if (role.role == EventRole::kCpuOp && !role.has_step)
      return std::string(trace.str(trace.events.name(event)));
  }
  if (!scratch->empty())
    return std::string(trace.str(trace.events.name(model.ids().ranges.event[scratch->back()])));
  return "(no operator)";
}

// The runtime call that launched device work k (the first candidate), or kNoIndex.
inline uint32_t LaunchOf(const EventModel& model, size_t work) {
  return FirstCandidate(model.links().RuntimeCandidates(work));
}

}  // namespace profsh::recommendations
