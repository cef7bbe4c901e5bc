#include "engine/exporters/perfetto_layout.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

namespace profsh::sqlite {

bool IsSlicePhase(char phase) {
  return phase == 'X' || phase == 'i' || phase == 'I' || phase == 'R';
}

namespace {

// Perfetto's sort key for JSON events at the same ts (its trace sorter): end events first, then
// complete events, the longer first, then everything else; file order breaks the remaining ties.
struct SortKey {
  int64_t ts;
  int64_t rank;
  uint64_t event;
  bool operator<(const SortKey& o) const {
    if (ts != o.ts) return ts < o.ts;
    if (rank != o.rank) return rank < o.rank;
    return event < o.event;
  }
};

std::vector<uint64_t> PerfettoOrder(const EventTable& ev) {
  std::vector<SortKey> keys(ev.size());
  for (size_t e = 0; e < ev.size(); ++e) {
    const char phase = ev.phase(e);
    const int64_t rank = phase == 'E'   ? std::numeric_limits<int64_t>::min()
                         : phase == 'X' ? std::numeric_limits<int64_t>::max() - ev.dur(e)
                                        : std::numeric_limits<int64_t>::max();
    keys[e] = SortKey{ev.ts(e), rank, e};
  }
  std::sort(keys.begin(), keys.end());
  std::vector<uint64_t> order(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) order[k] = keys[k].event;
  return order;
}

struct IdentKeyHash {
  size_t operator()(const Ident& id) const {
    return std::hash<int64_t>()(id.is_string ? -static_cast<int64_t>(id.str) - 1 : id.number) ^
           (id.is_string ? 0x9E3779B97F4A7C15ULL : 0);
  }
};
struct ThreadKeyHash {
  size_t operator()(const std::pair<int64_t, Ident>& k) const {
    return IdentKeyHash()(k.second) * 31 + std::hash<int64_t>()(k.first);
  }
};

// Processes and threads as Perfetto's process tracker makes them: a new pid brings its process
// and its main thread (tid = pid), then the thread itself.
class ThreadTable {
 public:
  explicit ThreadTable(PerfettoLayout& out) : out_(out) {
    out_.processes.push_back(PerfettoLayout::Process{});
    PerfettoLayout::Thread idle;
    idle.upid = 0;
    idle.is_main = true;
    out_.threads.push_back(idle);
  }

  int64_t Process(const Ident& pid) {
    auto [it, inserted] = upids_.try_emplace(pid, static_cast<int64_t>(out_.processes.size()));
    if (!inserted) return it->second;
    out_.processes.push_back(PerfettoLayout::Process{pid, 0});
    Thread(it->second, pid, pid);
    return it->second;
  }

  int64_t Thread(const Ident& pid, const Ident& tid) { return Thread(Process(pid), pid, tid); }

 private:
  int64_t Thread(int64_t upid, const Ident& pid, const Ident& tid) {
    auto [it, inserted] =
        utids_.try_emplace({upid, tid}, static_cast<int64_t>(out_.threads.size()));
    if (inserted) {
      PerfettoLayout::Thread row;
      row.tid = tid;
      row.upid = upid;
      row.is_main = tid == pid;
      out_.threads.push_back(row);
    }
    return it->second;
  }

  PerfettoLayout& out_;
  std::unordered_map<Ident, int64_t, IdentKeyHash> upids_;
  std::unordered_map<std::pair<int64_t, Ident>, int64_t, ThreadKeyHash> utids_;
};

// An instant's scope: its "s" field ('g' global, 'p' process, else thread).
char InstantScope(const Trace& t, size_t e, std::optional<uint32_t> scope_key) {
  if (!scope_key) return 't';
  ArgValue v;
  if (!ArgStore::View(&t.args, t.events.args(e)).Find(*scope_key, &v, true) ||
      v.type != ArgType::kString)
    return 't';
  const std::string_view s = t.str(v.str);
  return s.empty() ? 't' : s[0];
}

// Nesting on one track: the slices still open, innermost last.
struct OpenSlices {
  std::vector<int64_t> stack;
  std::vector<int64_t> slices;  // every slice of the track, in id order
};

}  // namespace

PerfettoLayout BuildPerfettoLayout(const Trace& t) {
  const EventTable& ev = t.events;
  PerfettoLayout out;
  ThreadTable threads(out);
  const std::optional<uint32_t> scope_key = t.strings.Find("s");
  const std::optional<uint32_t> id_key = t.strings.Find("id");

  std::vector<int64_t> thread_track_of_utid;
  std::unordered_map<int64_t, int64_t> process_track_of_upid;
  int64_t global_track = kNone;
  std::vector<OpenSlices> open;
  auto new_track = [&](PerfettoLayout::TrackRow row) {
    out.tracks.push_back(std::move(row));
    open.emplace_back();
    return static_cast<int64_t>(out.tracks.size()) - 1;
  };
  auto thread_track = [&](int64_t utid) {
    if (thread_track_of_utid.size() <= static_cast<size_t>(utid))
      thread_track_of_utid.resize(static_cast<size_t>(utid) + 1, kNone);
    int64_t& track = thread_track_of_utid[static_cast<size_t>(utid)];
    if (track == kNone) {
      PerfettoLayout::TrackRow row;
      row.utid = utid;
      track = new_track(row);
    }
    return track;
  };
  auto slice_ts = [&](int64_t s) { return ev.ts(out.slice_event[static_cast<size_t>(s)]); };
  auto slice_dur = [&](int64_t s) {
    const uint64_t e = out.slice_event[static_cast<size_t>(s)];
    return ev.phase(e) == 'X' ? ev.dur(e) : 0;
  };
  // The slice a flow point at `ts` binds to: the innermost one starting there, else the
  // innermost one open then.
  auto slice_at = [&](int64_t track, int64_t ts) -> int64_t {
    const std::vector<int64_t>& list = open[static_cast<size_t>(track)].slices;
    auto after = std::upper_bound(list.begin(), list.end(), ts,
                                  [&](int64_t v, int64_t s) { return v < slice_ts(s); });
    if (after == list.begin()) return kNone;
    int64_t s = *(after - 1);
    while (s != kNone && slice_ts(s) != ts && slice_ts(s) + slice_dur(s) <= ts)
      s = out.parent[static_cast<size_t>(s)];
    return s;
  };

  struct FlowKey {
    uint16_t category;
    int64_t id;
    bool operator<(const FlowKey& o) const {
      return category != o.category ? category < o.category : id < o.id;
    }
  };
  std::map<FlowKey, int64_t> flow_starts;
  std::map<FlowKey, PerfettoLayout::Flow> early_ends;
  auto flow_id = [&](size_t e, int64_t* id) {
    ArgValue v;
    if (!id_key || !ArgStore::View(&t.args, ev.args(e)).Find(*id_key, &v, true) || !v.is_number())
      return false;
    *id = v.AsInt();
    return true;
  };
  std::map<std::pair<int64_t, std::string>, int64_t> counter_tracks;
  std::vector<std::pair<int64_t, std::string>> counter_track_of_row;

  for (const uint64_t e : PerfettoOrder(ev)) {
    const Track& where = t.tracks[ev.track(e)];
    const int64_t utid = threads.Thread(where.pid, where.tid);
    const char phase = ev.phase(e);
    if (IsSlicePhase(phase)) {
      int64_t track;
      const char scope = phase == 'X' ? 't' : InstantScope(t, e, scope_key);
      if (scope == 'g') {
        if (global_track == kNone) {
          PerfettoLayout::TrackRow row;
          row.type = PerfettoLayout::TrackType::kGlobalInstant;
          global_track = new_track(row);
        }
        track = global_track;
      } else if (scope == 'p') {
        const int64_t upid = out.threads[static_cast<size_t>(utid)].upid;
        auto [it, inserted] = process_track_of_upid.try_emplace(upid, kNone);
        if (inserted) {
          PerfettoLayout::TrackRow row;
          row.type = PerfettoLayout::TrackType::kProcessInstant;
          row.upid = upid;
          it->second = new_track(row);
        }
        track = it->second;
      } else {
        track = thread_track(utid);
      }
      const int64_t id = static_cast<int64_t>(out.slice_event.size());
      out.slice_event.push_back(e);
      out.slice_track.push_back(track);
      const int64_t ts = ev.ts(e), dur = slice_dur(id);
      // Perfetto's slice tracker: a slice that ended before this one starts is closed, and so is
      // one ending where it starts, unless both are instants (instants at one ts stack).
      std::vector<int64_t>& stack = open[static_cast<size_t>(track)].stack;
      while (!stack.empty()) {
        const int64_t top = stack.back();
        const int64_t end = slice_ts(top) + slice_dur(top);
        if (end < ts || (end == ts && !(slice_dur(top) == 0 && dur == 0))) {
          stack.pop_back();
        } else {
          break;
        }
      }
      out.depth.push_back(static_cast<int32_t>(stack.size()));
      out.parent.push_back(stack.empty() ? kNone : stack.back());
      stack.push_back(id);
      open[static_cast<size_t>(track)].slices.push_back(id);
    } else if (phase == 's' || phase == 'f') {
      int64_t id;
      if (!flow_id(e, &id)) continue;
      const int64_t track = thread_track(utid);
      const int64_t at = slice_at(track, ev.ts(e));
      const FlowKey key{ev.category(e), id};
      if (phase == 's') {
        flow_starts[key] = at;
        // An end that came first at this same ts (file order) is this flow's end: Kineto's
        // integer microseconds put a launch and its kernel at one ts, the kernel's 'f' first.
        auto early = early_ends.find(key);
        if (early != early_ends.end()) {
          if (ev.ts(early->second.event) == ev.ts(e) && at != kNone &&
              early->second.slice_in != kNone)
            out.flows.push_back(
                PerfettoLayout::Flow{at, early->second.slice_in, early->second.event});
          early_ends.erase(early);
        }
        continue;
      }
      auto start = flow_starts.find(key);
      if (start == flow_starts.end()) {
        early_ends[key] = PerfettoLayout::Flow{kNone, at, e};
        continue;
      }
      if (start->second == kNone || at == kNone) continue;
      out.flows.push_back(PerfettoLayout::Flow{start->second, at, e});
    } else if (phase == 'C') {
      const int64_t upid = out.threads[static_cast<size_t>(utid)].upid;
      for (const ArgStore::View::Item item : ArgStore::View(&t.args, ev.args(e))) {
        if (item.top_level || !item.value.is_number()) continue;
        std::string name = std::string(t.str(ev.name(e))) + " " + std::string(t.str(item.key));
        auto [it, inserted] = counter_tracks.try_emplace({upid, name}, kNone);
        if (inserted) {
          it->second = static_cast<int64_t>(counter_track_of_row.size());
          counter_track_of_row.emplace_back(upid, std::move(name));
        }
        out.counters.push_back(
            PerfettoLayout::Counter{e, item.key, it->second, item.value.AsDouble()});
      }
    }
  }
  // Counter tracks come last: Perfetto makes them when the trace ends.
  const int64_t first_counter_track = static_cast<int64_t>(out.tracks.size());
  for (auto& [upid, name] : counter_track_of_row) {
    PerfettoLayout::TrackRow row;
    row.type = PerfettoLayout::TrackType::kCounter;
    row.upid = upid;
    row.name = std::move(name);
    out.tracks.push_back(std::move(row));
  }
  for (PerfettoLayout::Counter& c : out.counters) c.track += first_counter_track;

  // Names from the metadata events (kept by the trace per process and per profsh track), or a
  // string pid or tid as its own name.
  std::unordered_map<Ident, uint32_t, IdentKeyHash> process_name;
  for (const ProcessInfo& p : t.processes())
    if (p.name != 0) process_name[p.pid] = p.name;
  for (size_t upid = 1; upid < out.processes.size(); ++upid) {
    PerfettoLayout::Process& p = out.processes[upid];
    auto named = process_name.find(p.pid);
    p.name = named != process_name.end() ? named->second : p.pid.is_string ? p.pid.str : 0;
  }
  for (uint32_t tr = 0; tr < t.tracks.size(); ++tr) {
    const Track& where = t.tracks[tr];
    const int64_t utid = threads.Thread(where.pid, where.tid);
    PerfettoLayout::Thread& row = out.threads[static_cast<size_t>(utid)];
    row.name = t.thread(tr).name != 0 ? t.thread(tr).name : where.tid.is_string ? where.tid.str : 0;
  }
  return out;
}

}  // namespace profsh::sqlite
