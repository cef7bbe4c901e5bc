// Which op a memory record counts for. Memory profsh's collector recorded knows its thread: it
// counts for every op of that thread open at the time, so the innermost one's self memory has
// it. Records without such an op (a worker thread allocating for the main thread's op), and all
// of torch's records, follow torch: every CPU op of the process whose [start, end] holds the
// record's time counts it. torch 1.13 compares those times in whole microseconds, and so does
// profsh on 1.13's traces; torch 2.x compares nanoseconds, and so does profsh on 2.x's traces
// and on its own. Records no op covers become rows of their own, after all trace events.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "engine/analysis/function_events/builder.h"
#include "engine/analysis/function_events/torch_format.h"
#include "engine/trace/kineto_schema.h"
#include "engine/util/parallel.h"
#include "engine/util/saturating.h"

namespace profsh {

namespace {

inline int64_t FloorUs(int64_t ns) {
  return ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);
}

// lower_bound / upper_bound that start from a hint: consecutive queries are usually close, so
// gallop from the last answer instead of searching the whole array.
template <typename T, typename Less>
size_t BoundFrom(const std::vector<T>& v, const T& key, size_t hint, Less less) {
  size_t n = v.size();
  if (hint > n) hint = n;
  size_t lo, hi;
  if (hint < n && less(v[hint], key)) {
    size_t step = 1;
    lo = hint + 1;
    hi = hint + 1;
    while (hi < n && less(v[hi], key)) {
      lo = hi + 1;
      hi = std::min(n, hint + (step <<= 1));
    }
    if (hi > n) hi = n;
  } else {
    size_t step = 1;
    hi = hint;
    lo = hint;
    while (lo > 0 && !less(v[lo - 1], key)) {
      hi = lo - 1;
      lo = hint > (step <<= 1) ? hint - step : 0;
    }
  }
  return static_cast<size_t>(std::partition_point(v.begin() + lo, v.begin() + hi,
                                                  [&](const T& x) { return less(x, key); }) -
                             v.begin());
}

}  // namespace

void FunctionEventsBuilder::AppendLone(const MemoryRecord& r, uint32_t name) {
  f_.start_.push_back(r.ts);
  f_.end_.push_back(r.ts);
  f_.name_.push_back(name);
  f_.flags_.push_back(FunctionEvents::kLoneMemory);
  if (!thread_.empty()) thread_.push_back(r.track);
  f_.track_.push_back(r.track);
  if (want_inputs_) f_.input_set_.push_back(0);
  if (want_stacks_) {
    f_.stack_.push_back(0);
    seq_.push_back(-1);
  }
  if (want_flops_) f_.flops_.push_back(0);
  f_.cpu_memory_.push_back(r.cpu_bytes);
  if (!f_.cuda_memory_.empty() || r.cuda_bytes != 0) f_.cuda_memory_.push_back(r.cuda_bytes);
}

void FunctionEventsBuilder::AttributeMemory() {
  if (memory_.empty()) return;
  std::vector<uint32_t> pid_of_track(trace_.tracks.size());
  {
    std::unordered_map<int64_t, uint32_t> numeric;
    std::unordered_map<uint32_t, uint32_t> named;
    for (uint32_t t = 0; t < trace_.tracks.size(); ++t) {
      const Ident& pid = trace_.tracks[t].pid;
      uint32_t next = static_cast<uint32_t>(numeric.size() + named.size());
      pid_of_track[t] = pid.is_string ? named.emplace(pid.str, next).first->second
                                      : numeric.emplace(pid.number, next).first->second;
    }
  }
  const size_t m = f_.start_.size();
  bool any_cuda = false;
  for (const MemoryRecord& r : memory_) any_cuda |= r.cuda_bytes != 0;
  f_.cpu_memory_.assign(m, 0);
  if (any_cuda) f_.cuda_memory_.assign(m, 0);
  std::vector<bool> used(memory_.size(), false);

  struct Key {
    uint32_t group;  // the track (by thread) or the process (by time)
    int64_t ts;
    bool operator<(const Key& o) const { return group != o.group ? group < o.group : ts < o.ts; }
  };
  // One matching pass over the records not used yet: each op adds the records keyed within its
  // [start, end] in its group; records some op covered are used.
  // torch 2.x compares in nanoseconds (MemRecordsAcc on start_ns), 1.13 in whole microseconds.
  const bool exact = trace_.memory_by_thread || f_.torch_format == TorchFormat::k2;
  // torch 2.x's bounds go through floats: it looks records up between start_ns() / 1000 * 1000
  // and end_ns() / 1000 * 1000 computed in doubles, on times since the epoch (the trace's time
  // plus baseTimeNanoseconds), where a double's step is 256 ns. So an op's bounds move by up to
  // 128 ns and records near its edges fall out or in; records' own times stay exact integers.
  const bool float_bounds = f_.torch_format == TorchFormat::k2 && !trace_.memory_by_thread;
  const int64_t epoch = trace_.has_origin ? trace_.origin_ns : 0;
  auto OpBound = [&](int64_t ns, bool lower) -> int64_t {
    if (!float_bounds) return ns;
    const double bound = PythonDivide1000(ns + epoch) * 1000.0;
    return static_cast<int64_t>(lower ? std::ceil(bound) : std::floor(bound)) - epoch;
  };
  auto match = [&](bool by_thread) {
    std::vector<uint32_t> order;
    for (uint32_t k = 0; k < memory_.size(); ++k) {
      if (!memory_[k].oom && !used[k]) order.push_back(k);
    }
    if (order.empty()) return;
    auto key_of = [&](uint32_t track, int64_t ts) {
      return Key{by_thread ? track : pid_of_track[track], exact ? ts : FloorUs(ts)};
    };
    std::vector<Key> keys(order.size());
    for (size_t k = 0; k < order.size(); ++k)
      keys[k] = key_of(memory_[order[k]].track, memory_[order[k]].ts);
    std::vector<uint32_t> by_key(order.size());
    for (uint32_t k = 0; k < by_key.size(); ++k) by_key[k] = k;
    // Records come in time order per thread, so usually already sorted.
    if (!std::is_sorted(keys.begin(), keys.end()))
      std::stable_sort(by_key.begin(), by_key.end(),
                       [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
    std::vector<Key> sorted(order.size());
    // Prefix sums in unsigned (wrapping) arithmetic: a range's sum is a difference of two, exact
    // whenever the range's own sum fits, even where hostile sizes carry the prefixes past int64.
    std::vector<uint64_t> cpu_prefix(order.size() + 1, 0), cuda_prefix(order.size() + 1, 0);
    for (size_t k = 0; k < by_key.size(); ++k) {
      const MemoryRecord& r = memory_[order[by_key[k]]];
      sorted[k] = keys[by_key[k]];
      cpu_prefix[k + 1] = cpu_prefix[k] + static_cast<uint64_t>(r.cpu_bytes);
      cuda_prefix[k + 1] = cuda_prefix[k] + static_cast<uint64_t>(r.cuda_bytes);
    }
    auto range_sum = [](const std::vector<uint64_t>& prefix, size_t a, size_t b) {
      return static_cast<int64_t>(prefix[b] - prefix[a]);
    };
    auto less = [](const Key& x, const Key& y) { return x < y; };
    auto less_equal = [](const Key& x, const Key& y) { return !(y < x); };
    // Which records some op covers: +1 where a covered range starts, -1 after it ends. The ops
    // are split in parts, each with its own marks.
    const size_t parts = PartsFor(m);
    std::vector<std::vector<int32_t>> marks(parts, std::vector<int32_t>(order.size() + 1, 0));
    RunInParts(parts, [&](size_t part) {
      std::vector<int32_t>& mark = marks[part];
      size_t hint_a = 0, hint_b = 0;
      for (size_t c = PartBegin(m, part, parts), end = PartEnd(m, part, parts); c < end; ++c) {
        if (f_.flags_[c] & FunctionEvents::kDevice) continue;
        const uint32_t track = f_.track_[c];
        size_t a = hint_a =
            BoundFrom(sorted, key_of(track, OpBound(f_.start_[c], true)), hint_a, less);
        const Key end_key = key_of(track, OpBound(f_.end_[c], false));
        // Most ops hold no record: the first record at or after the start already lies beyond
        // the end.
        if (a == sorted.size() || !less_equal(sorted[a], end_key)) continue;
        size_t b = hint_b = BoundFrom(sorted, end_key, hint_b, less_equal);
        f_.cpu_memory_[c] = SaturatingAdd(f_.cpu_memory_[c], range_sum(cpu_prefix, a, b));
        if (any_cuda)
          f_.cuda_memory_[c] = SaturatingAdd(f_.cuda_memory_[c], range_sum(cuda_prefix, a, b));
        mark[a] += 1;
        mark[b] -= 1;
      }
    });
    int32_t running = 0;
    for (size_t k = 0; k < by_key.size(); ++k) {
      for (const auto& mark : marks) running += mark[k];
      if (running > 0) used[order[by_key[k]]] = true;
    }
  };
  if (trace_.memory_by_thread) match(true);
  match(false);

  const uint32_t memory_row = out_->strings.Intern(kineto::kMemoryEvent);
  const uint32_t oom_row = out_->strings.Intern(kineto::kOutOfMemoryEvent);
  for (uint32_t k = 0; k < memory_.size(); ++k) {
    if (!memory_[k].oom && !used[k]) AppendLone(memory_[k], memory_row);
  }
  for (const MemoryRecord& r : memory_) {
    if (r.oom) AppendLone(r, oom_row);
  }
}

}  // namespace profsh
