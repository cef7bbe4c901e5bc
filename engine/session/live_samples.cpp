#include "engine/session/live_samples.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "engine/stream/stream_format.h"

namespace profsh {

namespace st = stream;

namespace {

// A sample is written a little after its time is taken (the kernel's record, the collector's
// signal handler copying the stack): a clock block vouches for the samples this much before it.
constexpr int64_t kWriteSlackNs = 2'000'000;
// Samples of a process whose stream has not shown up this long after they were taken belong to
// no window (a process the collector is not in).
constexpr int64_t kNoStreamGraceNs = 2'000'000'000;
// A sealed window waits at most this long for its samples file (a writer that stopped writing).
constexpr auto kMostWait = std::chrono::seconds(10);
// A process whose stream says nothing newer for this long while its samples go on is taken as
// stopped: its later samples are counted as outside every window, the other processes go on.
constexpr auto kStalledStream = std::chrono::seconds(2);

}  // namespace

struct LiveSamples::File {
  std::string path;
  int fd = -1;
  int64_t pid = 0;      // the timer fallback's file: its process; 0: profsh's file (every process)
  size_t consumed = 0;  // bytes decoded (the header, whole blocks)
  size_t punched = 0;   // bytes given back to the file system
  bool have_clock = false;
  int64_t mono_to_real = 0;
  int64_t complete_mono = INT64_MIN;  // every sample taken before it is in the file
  int64_t placed_until = INT64_MIN;   // absolute ns: the samples up to here are placed
  bool partial = false;               // ends in a block still being written
  bool unsampled = false;  // the collector could not sample (no signal free): nothing comes
  struct Block {
    uint64_t time = 0;
    uint32_t type = 0;
    std::string payload;
  };
  std::vector<Block> pending;  // read, not replayed yet
  SampleUnwinder unwinder;
  uint64_t unnamed_counted = 0;
};

struct LiveSamples::Held {
  int64_t begin_ns = 0, end_ns = INT64_MAX;
  bool ended = false;
  bool warned = false;
  std::chrono::steady_clock::time_point ended_at;
  struct Sample {
    int64_t ns = 0, tid = 0;
    uint32_t weight = 1;
    std::shared_ptr<const SampleStack> stack;
  };
  std::vector<Sample> samples;
  PythonCalls python;
};

LiveSamples::LiveSamples(std::string folder, SessionSummary& summary,
                         std::vector<std::string>& warnings)
    : folder_(std::move(folder)), summary_(summary), warnings_(warnings) {}

LiveSamples::~LiveSamples() {
  for (auto& [path, f] : files_) {
    if (f->fd >= 0) close(f->fd);
  }
}

std::vector<StackSampleNow> LiveSamples::LastSamples(int64_t pid, int64_t since_ns,
                                                     size_t per_thread) const {
  std::map<int64_t, std::vector<StackSampleNow>> by_thread;
  for (const auto& [key, held] : held_) {
    if (key.first != pid) continue;
    for (const Held::Sample& x : held->samples) {
      if (x.ns < since_ns || !x.stack) continue;
      by_thread[x.tid].push_back(StackSampleNow{x.tid, x.ns, x.stack->stack});
    }
  }
  std::vector<StackSampleNow> out;
  for (auto& [tid, samples] : by_thread) {
    std::sort(samples.begin(), samples.end(),
              [](const StackSampleNow& a, const StackSampleNow& b) { return a.ns < b.ns; });
    const size_t from = samples.size() > per_thread ? samples.size() - per_thread : 0;
    for (size_t i = from; i < samples.size(); ++i) out.push_back(std::move(samples[i]));
  }
  return out;
}

void LiveSamples::WindowOpened(const WindowInfo& w) {
  auto held = std::make_unique<Held>();
  held->begin_ns = w.begin_ns;
  held_[{w.pid, w.index}] = std::move(held);
}

void LiveSamples::PythonCall(int64_t pid, int64_t tid, int64_t begin_ns, int64_t end_ns,
                             std::string_view name) {
  if (Held* w = WindowAt(pid, begin_ns)) w->python.Add(pid, tid, begin_ns, end_ns, name);
}

void LiveSamples::WindowEnded(const WindowInfo& w) {
  auto it = held_.find({w.pid, w.index});
  if (it == held_.end()) return;
  Held& h = *it->second;
  h.end_ns = w.end_ns;
  h.ended = true;
  h.ended_at = std::chrono::steady_clock::now();
  // Placed while the window was open, but after the end it turned out to have.
  const size_t before = h.samples.size();
  std::erase_if(h.samples, [&](const Held::Sample& s) { return s.ns > h.end_ns; });
  summary_.samples_outside_windows += before - h.samples.size();
}

LiveSamples::Held* LiveSamples::WindowAt(int64_t pid, int64_t ns) {
  Held* best = nullptr;
  for (auto it = held_.lower_bound({pid, 0}); it != held_.end() && it->first.first == pid; ++it) {
    Held* h = it->second.get();
    if (h->begin_ns <= ns && (best == nullptr || h->begin_ns >= best->begin_ns)) best = h;
  }
  if (best != nullptr && best->ended && ns > best->end_ns) return nullptr;
  return best;
}

Status LiveSamples::Discover() {
  DIR* d = opendir(folder_.c_str());
  if (d == nullptr) return Error{folder_ + ": cannot read the session folder: " + strerror(errno)};
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (!name.ends_with(st::kSamplesSuffix)) continue;
    const std::string path = folder_ + "/" + name;
    if (files_.count(path)) continue;
    auto f = std::make_unique<File>();
    f->path = path;
    long long pid = 0;
    unsigned image = 0;
    if (name != st::kSamplesFile &&
        std::sscanf(name.c_str(), "cpu-samples-%lld-%u.psamples", &pid, &image) != 2)
      continue;  // not one of ours
    f->pid = pid;
    f->fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (f->fd < 0) continue;  // being created; next poll
    files_[path] = std::move(f);
  }
  closedir(d);
  return Status::Ok();
}

Status LiveSamples::ReadFile(File& f) {
  std::string data;
  char chunk[1 << 16];
  size_t at = f.consumed;
  while (true) {
    ssize_t n = pread(f.fd, chunk, sizeof chunk, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(chunk, static_cast<size_t>(n));
    at += static_cast<size_t>(n);
  }
  size_t start = 0;
  if (f.consumed == 0) {
    st::FileHeader header{};
    if (data.size() < sizeof header) return Status::Ok();  // still being written
    std::memcpy(&header, data.data(), sizeof header);
    if (std::memcmp(header.magic, st::kMagic, sizeof header.magic) != 0 ||
        header.header_size < sizeof header)
      return Error{f.path + ": not a profsh samples file (bad header)"};
    if (header.header_size > data.size()) return Status::Ok();
    start = header.header_size;
  }
  st::BlockIterator blocks(data, start, f.consumed);
  st::RawBlock b;
  while (blocks.Next(&b)) {
    st::Cursor c(b.payload);
    switch (b.type) {
      case st::kClock: {
        st::ClockBlock clock;
        if (!clock.Decode(c)) return Error{f.path + ": bad clock block"};
        if (!f.have_clock) f.mono_to_real = clock.realtime_ns - clock.monotonic_ns;
        f.have_clock = true;
        f.complete_mono = std::max(f.complete_mono, clock.monotonic_ns);
        break;
      }
      case st::kSampleConfig: {
        st::SampleConfigBlock config;
        if (!config.Decode(c)) return Error{f.path + ": bad sample configuration block"};
        f.unsampled = config.method == st::kSampleNone;
        method_ = SamplingMethodText(config);
        summary_.sampling_method = method_;
        break;
      }
      case st::kSampleDrops: {
        st::SampleDropsBlock drops;
        if (!drops.Decode(c)) return Error{f.path + ": bad sample drops block"};
        summary_.samples_lost += drops.lost + drops.dropped;
        break;
      }
      default: {
        uint64_t t = 0;
        if (SampleBlockTime(b.type, b.payload, &t)) {
          f.pending.push_back(File::Block{t, b.type, std::string(b.payload)});
        } else if (b.type == st::kSampleTask || b.type == st::kSampleMapping ||
                   b.type == st::kSample) {
          return Error{f.path + ": bad sample block at byte " + std::to_string(b.offset)};
        }
        break;  // others: blocks of later versions
      }
    }
  }
  f.consumed += blocks.consumed();
  f.partial = blocks.has_partial_block();
  // What is decoded is not needed on disk any more (a long job's samples file stays flat).
  const size_t punch_to = f.consumed / 4096 * 4096;
  if (punch_to > f.punched && f.punched + (1 << 20) <= punch_to) {
    if (fallocate(f.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(f.punched),
                  static_cast<off_t>(punch_to - f.punched)) == 0) {
      f.punched = punch_to;
    }
  }
  return Status::Ok();
}

void LiveSamples::PlaceSample(const st::SampleBlock& s, int64_t real_ns, File& f) {
  Held* w = WindowAt(s.pid, real_ns);
  if (w == nullptr) {
    auto d = delivered_.find(s.pid);
    if (d != delivered_.end() && real_ns >= d->second.first && real_ns <= d->second.second)
      ++summary_.late_events;  // its window was handed over already
    else
      ++summary_.samples_outside_windows;
    return;
  }
  w->samples.push_back(
      Held::Sample{real_ns, s.tid, static_cast<uint32_t>(s.weight), f.unwinder.Stack(s)});
}

Status LiveSamples::Place(File& f, const KnownUntil& known, bool finished) {
  if (!f.have_clock) return Status::Ok();
  const int64_t limit = finished                       ? INT64_MAX
                        : f.complete_mono == INT64_MIN ? INT64_MIN
                                                       : f.complete_mono - kWriteSlackNs;
  // Mappings and task changes first among equal times: a sample needs the mapping made before.
  std::stable_sort(f.pending.begin(), f.pending.end(),
                   [](const File::Block& x, const File::Block& y) {
                     if (x.time != y.time) return x.time < y.time;
                     return (x.type == st::kSample) < (y.type == st::kSample);
                   });
  size_t i = 0;
  for (; i < f.pending.size(); ++i) {
    const File::Block& b = f.pending[i];
    if (static_cast<int64_t>(b.time) > limit) break;
    st::Cursor c(b.payload);
    if (b.type == st::kSampleTask) {
      st::SampleTaskBlock t;
      if (!t.Decode(c)) return Error{f.path + ": bad task block"};
      f.unwinder.Task(t);
      continue;
    }
    if (b.type == st::kSampleMapping) {
      st::SampleMappingBlock m;
      if (!m.Decode(c)) return Error{f.path + ": bad mapping block"};
      f.unwinder.Mapping(m);
      continue;
    }
    st::SampleBlock s;
    if (!s.Decode(c)) return Error{f.path + ": bad sample block"};
    const int64_t real = static_cast<int64_t>(s.time_ns) + f.mono_to_real;
    if (!finished) {
      // Its window may not be known yet: wait (the blocks after it too, to keep time order).
      const std::optional<int64_t> until = known(s.pid);
      if (!until) {
        if (real > f.complete_mono + f.mono_to_real - kNoStreamGraceNs) break;
        ++summary_.samples_outside_windows;
        continue;
      }
      if (*until < real) {
        if (!Stalled(s.pid, *until)) break;
        ++summary_.samples_outside_windows;
        continue;
      }
    }
    PlaceSample(s, real, f);
  }
  // A process image's own file (the timer fallback) is whole once its stream has ended: the
  // collector stops its timers and writes their last samples before the stream's end.
  const bool writer_done = !finished && f.pid != 0 && i == f.pending.size() &&
                           known(f.pid).value_or(INT64_MIN) == INT64_MAX;
  // Never past what the clock block vouches for: a ring drained after it may still bring an
  // earlier sample than the first one waiting here.
  const int64_t vouched = limit == INT64_MAX   ? INT64_MAX
                          : limit == INT64_MIN ? INT64_MIN
                                               : limit + f.mono_to_real;
  f.placed_until =
      i < f.pending.size()
          ? std::min(static_cast<int64_t>(f.pending[i].time) + f.mono_to_real - 1, vouched)
      : limit == INT64_MAX || f.unsampled || writer_done ? INT64_MAX
      : limit == INT64_MIN                               ? INT64_MIN
                                                         : limit + f.mono_to_real;
  f.pending.erase(f.pending.begin(), f.pending.begin() + static_cast<ptrdiff_t>(i));
  const uint64_t unnamed = f.unwinder.unnamed_frames();
  summary_.sample_frames_unnamed += unnamed - f.unnamed_counted;
  f.unnamed_counted = unnamed;
  return Status::Ok();
}

Status LiveSamples::Read(const KnownUntil& known, bool finished) {
  Status st = Discover();
  if (!st.ok()) return st;
  // Asked once per pid and read: the streams do not move meanwhile.
  std::map<int64_t, std::optional<int64_t>> asked;
  const KnownUntil known_once = [&](int64_t pid) {
    auto [it, added] = asked.try_emplace(pid);
    if (added) it->second = known(pid);
    return it->second;
  };
  for (auto& [path, f] : files_) {
    st = ReadFile(*f);
    if (!st.ok()) return st;
    st = Place(*f, known_once, finished);
    if (!st.ok()) return st;
    if (finished && f->partial) {
      warnings_.push_back(f->path +
                          ": ends in a partial block (its writer was killed while "
                          "writing)");
    }
  }
  finished_ = finished_ || finished;
  return Status::Ok();
}

bool LiveSamples::Stalled(int64_t pid, int64_t until) {
  const auto now = std::chrono::steady_clock::now();
  auto [it, added] = known_moved_.try_emplace(pid, until, now);
  if (added || it->second.first != until) {
    it->second = {until, now};
    return false;
  }
  return now - it->second.second >= kStalledStream;
}

int64_t LiveSamples::PlacedUntil(int64_t pid) const {
  int64_t until = INT64_MIN;
  for (const auto& [path, f] : files_) {
    if (f->pid == 0) return f->placed_until;  // profsh's file has every process
    if (f->pid == pid) until = std::max(until, f->placed_until);
  }
  return until;
}

bool LiveSamples::Ready(const WindowInfo& window) {
  auto it = held_.find({window.pid, window.index});
  if (it == held_.end()) return true;
  Held& w = *it->second;
  if (finished_ || w.warned) return true;
  if (!w.ended) return false;
  if (PlacedUntil(window.pid) >= w.end_ns) return true;
  if (std::chrono::steady_clock::now() - w.ended_at < kMostWait) return false;
  w.warned = true;
  warnings_.push_back("window " + std::to_string(window.index) + " of pid " +
                      std::to_string(window.pid) +
                      " was handed over without waiting longer for its CPU samples: the samples "
                      "file had not caught up with its end after 10 s (some may be missing)");
  return true;
}

void LiveSamples::Emit(const WindowInfo& window, TraceBuilder& builder, int64_t origin_ns) {
  auto it = held_.find({window.pid, window.index});
  if (it == held_.end()) return;
  Held& w = *it->second;
  std::stable_sort(w.samples.begin(), w.samples.end(),
                   [](const Held::Sample& a, const Held::Sample& b) { return a.ns < b.ns; });
  w.python.Sort();
  OpenPythonCalls open_calls(w.python);
  SampleEventWriter writer(builder);
  static const std::vector<const std::string*> kNoPython;
  for (const Held::Sample& s : w.samples) {
    writer.Add(*s.stack,
               s.stack->has_eval_loop ? open_calls.At(window.pid, s.tid, s.ns) : kNoPython,
               window.pid, s.tid, s.ns - origin_ns, s.weight, summary_);
  }
  delivered_[window.pid] = {w.begin_ns, w.end_ns};
  held_.erase(it);
}

}  // namespace profsh
