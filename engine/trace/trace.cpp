#include "engine/trace/trace.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>

#include "engine/trace/kineto_schema.h"
#include "engine/util/hash.h"

namespace profsh {

void EventTable::Reserve(size_t n) {
  ts_.reserve(n);
  dur_.reserve(n);
  template_.reserve(n);
  args_.reserve(n);
}

void EventTable::ReleaseUnusedCapacity() {
  profsh::ReleaseUnusedCapacity(ts_);
  profsh::ReleaseUnusedCapacity(dur_);
  profsh::ReleaseUnusedCapacity(template_);
  profsh::ReleaseUnusedCapacity(args_);
}

size_t EventTable::MemoryBytes() const {
  return HeldBytes(ts_) + HeldBytes(dur_) + HeldBytes(template_) + HeldBytes(args_) +
         templates_.capacity() * sizeof(EventTemplate) + template_slots_.capacity() * 4 +
         long_durations_.capacity() * sizeof(long_durations_[0]);
}

namespace {
uint64_t HashTemplate(const EventTemplate& t) {
  uint64_t h = (static_cast<uint64_t>(t.name) << 32 | t.track) * 0x9E3779B97F4A7C15ULL ^
               (static_cast<uint64_t>(t.kind) << 32 | t.schema_plus_one) * 0xC2B2AE3D27D4EB4FULL;
  return h ^ (h >> 29);
}
}  // namespace

uint32_t EventTable::InternTemplateSlow(const EventTemplate& t) {
  if (template_slots_.empty()) template_slots_.assign(64, 0);
  size_t mask = template_slots_.size() - 1;
  size_t pos = HashTemplate(t) & mask;
  while (template_slots_[pos] != 0) {
    uint32_t id = template_slots_[pos] - 1;
    if (templates_[id] == t) return id;
    pos = (pos + 1) & mask;
  }
  uint32_t id = static_cast<uint32_t>(templates_.size());
  templates_.push_back(t);
  template_slots_[pos] = id + 1;
  if (templates_.size() * 2 > template_slots_.size()) RehashTemplates();
  return id;
}

void EventTable::RehashTemplates() {
  size_t slots = 64;
  while (slots < templates_.size() * 4) slots *= 2;
  template_slots_.assign(slots, 0);
  size_t mask = slots - 1;
  for (uint32_t id = 0; id < templates_.size(); ++id) {
    size_t pos = HashTemplate(templates_[id]) & mask;
    while (template_slots_[pos] != 0) pos = (pos + 1) & mask;
    template_slots_[pos] = id + 1;
  }
}

namespace {
// The first entry at or after event i in [begin, end), which is sorted by event.
template <typename Iterator>
Iterator LongDurationAt(Iterator begin, Iterator end, uint64_t i) {
  return std::lower_bound(begin, end, i,
                          [](const LongDuration& d, uint64_t e) { return d.event < e; });
}
}  // namespace

int64_t EventTable::FindLongDuration(size_t i) const {
  auto it = LongDurationAt(long_durations_.begin(), long_durations_.end(), i);
  return it != long_durations_.end() && it->event == i ? it->ns : 0;
}

void EventTable::SetDurations(const std::vector<LongDuration>& durations) {
  ++generation_;
  constexpr uint64_t kGone = UINT64_MAX;
  const auto sorted = static_cast<ptrdiff_t>(long_durations_.size());
  for (const LongDuration& d : durations) {
    const bool is_long = d.ns < 0 || d.ns >= kLongDuration;
    auto it = LongDurationAt(long_durations_.begin(), long_durations_.begin() + sorted, d.event);
    if (dur_[d.event] == kLongDuration && it != long_durations_.begin() + sorted &&
        it->event == d.event) {
      // Already long: its entry is among the first `sorted`, which are still in order.
      if (is_long) {
        it->ns = d.ns;
      } else {
        it->event = kGone;
        dur_[d.event] = static_cast<uint32_t>(d.ns);
      }
    } else if (!is_long) {
      dur_[d.event] = static_cast<uint32_t>(d.ns);
    } else {
      dur_[d.event] = kLongDuration;
      long_durations_.push_back(d);
    }
  }
  std::sort(long_durations_.begin(), long_durations_.end(),
            [](const LongDuration& a, const LongDuration& b) { return a.event < b.event; });
  while (!long_durations_.empty() && long_durations_.back().event == kGone)
    long_durations_.pop_back();
}

void EventTable::SetPhase(size_t i, char phase) {
  ++generation_;
  EventTemplate t = event_template(i);
  t.kind = PackKind(phase, CategoryOf(t.kind), FlagsOf(t.kind));
  template_[i] = InternTemplate(t);
}

void EventTable::AddFlags(size_t i, uint8_t f) {
  ++generation_;
  EventTemplate t = event_template(i);
  t.kind |= static_cast<uint32_t>(f) << 8;
  template_[i] = InternTemplate(t);
}

void EventTable::Compact(const std::vector<bool>& drop) {
  ++generation_;
  const size_t n = size();
  size_t w = 0, next_long = 0, kept_long = 0;
  for (size_t r = 0; r < n; ++r) {
    bool is_long = next_long < long_durations_.size() && long_durations_[next_long].event == r;
    if (drop[r]) {
      next_long += is_long;
      continue;
    }
    if (is_long) long_durations_[kept_long++] = LongDuration{w, long_durations_[next_long++].ns};
    if (w != r) {
      ts_[w] = ts_[r];
      dur_[w] = dur_[r];
      template_[w] = template_[r];
      args_[w] = args_[r];
    }
    ++w;
  }
  long_durations_.resize(kept_long);
  ts_.resize(w);
  dur_.resize(w);
  template_.resize(w);
  args_.resize(w);
}

void EventTable::Assign(LargeVector<int64_t> ts, LargeVector<uint32_t> dur,
                        LargeVector<uint32_t> templ, LargeVector<uint32_t> args,
                        std::vector<EventTemplate> templates,
                        std::vector<LongDuration> long_durations) {
  ++generation_;
  ts_ = std::move(ts);
  dur_ = std::move(dur);
  template_ = std::move(templ);
  args_ = std::move(args);
  templates_ = std::move(templates);
  long_durations_ = std::move(long_durations);
  last_template_ = 0;
  recent_.assign(kRecentTemplates, RecentTemplate{});
  RehashTemplates();
}

const std::string* Trace::FindMetadata(std::string_view key) const {
  for (const auto& [k, v] : metadata) {
    if (k == key) return &v;
  }
  return nullptr;
}

namespace {

// The text of a top-level member's value in a JSON object's text, or nullptr. profsh wrote the
// object; other tools may have re-spaced it.
const char* MemberValue(const std::string& object, std::string_view key) {
  std::string quoted(1, '"');
  quoted.append(key).push_back('"');
  size_t at = object.find(quoted);
  if (at == std::string::npos) return nullptr;
  at = object.find_first_not_of(" \t\r\n:", at + quoted.size());
  return at == std::string::npos ? nullptr : object.c_str() + at;
}

}  // namespace

void Trace::ReadProfshMetadata() {
  const std::string* meta = FindMetadata("profsh");
  if (meta == nullptr) return;
  if (const char* v = MemberValue(*meta, "memory_attribution");
      v && std::strncmp(v, "\"thread\"", 8) == 0)
    memory_by_thread = true;
  long long first = 0, last = 0;
  if (const char* v = MemberValue(*meta, "steps");
      v && !has_steps && std::sscanf(v, "[ %lld , %lld ]", &first, &last) == 2) {
    has_steps = true;
    first_step = first;
    last_step = last;
  }
}

size_t Trace::TrackKeyHash::operator()(const std::pair<Ident, Ident>& k) const {
  auto one = [](const Ident& id) {
    return HashInt(id.is_string ? (static_cast<uint64_t>(id.str) | (1ull << 63))
                                : static_cast<uint64_t>(id.number));
  };
  return one(k.first) * 31 + one(k.second);
}

uint16_t Trace::InternCategory(std::string_view name) {
  uint32_t id = strings.Intern(name);
  auto it = category_index_.find(id);
  if (it != category_index_.end()) return it->second;
  if (id == 0) return 0;
  if (categories.size() >= std::numeric_limits<uint16_t>::max()) {
    // More than 65535 distinct categories: the last slot collects the rest.
    return static_cast<uint16_t>(categories.size() - 1);
  }
  uint16_t index = static_cast<uint16_t>(categories.size());
  categories.push_back(id);
  category_index_.emplace(id, index);
  return index;
}

uint32_t Trace::InternTrack(const Ident& pid, const Ident& tid) {
  auto key = std::make_pair(pid, tid);
  auto it = track_index_.find(key);
  if (it != track_index_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(tracks.size());
  tracks.push_back(Track{pid, tid});
  track_index_.emplace(key, id);
  return id;
}

void Trace::RebuildDerived() {
  derived.Clear();
  if (track_index_.size() != tracks.size()) {
    track_index_.clear();
    for (uint32_t i = 0; i < tracks.size(); ++i) {
      track_index_.emplace(std::make_pair(tracks[i].pid, tracks[i].tid), i);
    }
  }
  if (category_index_.size() + 1 != categories.size()) {
    category_index_.clear();
    for (uint16_t i = 1; i < categories.size(); ++i) category_index_.emplace(categories[i], i);
  }
  processes_.clear();
  threads_.assign(tracks.size(), ThreadInfo{});
  std::vector<uint32_t> process_of_track(tracks.size(), 0);
  std::unordered_map<std::pair<Ident, Ident>, uint32_t, TrackKeyHash, TrackKeyEq> process_index;
  for (uint32_t t = 0; t < tracks.size(); ++t) {
    auto key = std::make_pair(tracks[t].pid, Ident{});
    auto [it, inserted] = process_index.emplace(key, static_cast<uint32_t>(processes_.size()));
    if (inserted) {
      processes_.push_back(ProcessInfo{});
      processes_.back().pid = tracks[t].pid;
    }
    processes_[it->second].tracks.push_back(t);
    process_of_track[t] = it->second;
  }

  auto name_id = strings.Find(kineto::kMetaName);
  auto labels_id = strings.Find(kineto::kMetaLabels);
  auto sort_id = strings.Find(kineto::kMetaSortIndex);
  auto process_name = strings.Find(kineto::kProcessName);
  auto process_labels = strings.Find(kineto::kProcessLabels);
  auto process_sort = strings.Find(kineto::kProcessSortIndex);
  auto thread_name = strings.Find(kineto::kThreadName);
  auto thread_sort = strings.Find(kineto::kThreadSortIndex);

  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  const size_t n = events.size();
  for (size_t i = 0; i < n; ++i) {
    char ph = events.phase(i);
    if (ph != 'M') {
      lo = std::min(lo, events.ts(i));
      hi = std::max(hi, events.end(i));
      continue;
    }
    uint32_t nm = events.name(i);
    auto view = args.Get(events.args(i));
    ArgValue v;
    ProcessInfo& proc = processes_[process_of_track[events.track(i)]];
    ThreadInfo& th = threads_[events.track(i)];
    if (process_name && nm == *process_name && name_id && view.Find(*name_id, &v) &&
        v.type == ArgType::kString) {
      proc.name = v.str;
    } else if (process_labels && nm == *process_labels && labels_id && view.Find(*labels_id, &v) &&
               v.type == ArgType::kString) {
      proc.labels = v.str;
    } else if (process_sort && nm == *process_sort && sort_id && view.Find(*sort_id, &v) &&
               v.is_number()) {
      proc.sort_index = v.AsInt();
      proc.has_sort_index = true;
    } else if (thread_name && nm == *thread_name && name_id && view.Find(*name_id, &v) &&
               v.type == ArgType::kString) {
      th.name = v.str;
    } else if (thread_sort && nm == *thread_sort && sort_id && view.Find(*sort_id, &v) &&
               v.is_number()) {
      th.sort_index = v.AsInt();
      th.has_sort_index = true;
    }
  }
  if (lo > hi) lo = hi = 0;
  begin_ns_ = lo;
  end_ns_ = hi;
}

size_t Trace::MemoryBytes() const {
  return strings.MemoryBytes() + args.MemoryBytes() + events.MemoryBytes() +
         tracks.capacity() * sizeof(Track);
}

}  // namespace profsh
