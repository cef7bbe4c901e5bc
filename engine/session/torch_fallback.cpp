#include "engine/session/torch_fallback.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "engine/importers/importer.h"
#include "engine/io/input_source.h"
#include "engine/trace/trace_append.h"

namespace profsh {

namespace {

constexpr char kTracePrefix[] = "torch-trace-";
constexpr char kNotePrefix[] = "operators-";
constexpr char kAnchorName[] = "profsh::clock_anchor";
constexpr char kAnchorWarmupName[] = "profsh::clock_anchor_warmup";
// torch.profiler (1.13 without Kineto) names its one process so.
constexpr char kLegacyCpuPid[] = "CPU functions";

struct Anchor {
  int64_t before_ns = 0, after_ns = 0, tid = 0;
};

struct AnchorFile {
  int64_t pid = 0;
  std::string torch, reason;
  std::vector<Anchor> anchors;
};

// Names of the folder's files that start with `prefix` and end with `suffix`, sorted.
std::vector<std::string> FilesLike(const std::string& folder, const std::string& prefix,
                                   const std::string& suffix) {
  std::vector<std::string> out;
  if (DIR* d = opendir(folder.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > prefix.size() + suffix.size() && name.starts_with(prefix) &&
          name.ends_with(suffix))
        out.push_back(name);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Result<AnchorFile> ReadAnchorFile(const std::string& path) {
  std::istringstream in(ReadWhole(path));
  AnchorFile a;
  std::string line;
  bool header = false;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string key;
    f >> key;
    if (key == "profsh-torch-anchor") {
      int version = 0;
      f >> version;
      if (version != 1) return Error{path + ": unknown version of the anchor file"};
      header = true;
    } else if (key == "pid") {
      f >> a.pid;
    } else if (key == "torch") {
      f >> a.torch;
    } else if (key == "reason") {
      std::getline(f >> std::ws, a.reason);
    } else if (key == "anchor") {
      Anchor x;
      if (!(f >> x.before_ns >> x.after_ns >> x.tid) || x.after_ns < x.before_ns)
        return Error{path + ": malformed anchor line '" + line + "'"};
      a.anchors.push_back(x);
    }
  }
  if (!header) return Error{path + ": not a profsh anchor file"};
  if (a.anchors.empty()) return Error{path + ": no anchor (torch's clock cannot be placed)"};
  return a;
}

// A torch time (absolute ns of its trace: origin + ts) paired with a realtime ns, and how far
// apart the realtime readings around it were (the pair's uncertainty).
struct ClockPair {
  int64_t torch_ns = 0, real_ns = 0, width_ns = 0;
};

// torch's time -> the collector's realtime ns: the anchors' midpoints paired with their events'
// midpoints. The offset from the narrowest pair at the start, the rate from it and the narrowest
// at the end only over a long run (over a short one the pairs' microseconds of uncertainty would
// make a worse rate than assuming torch's clock runs at realtime's).
class ClockMap {
 public:
  bool Fit(const std::vector<ClockPair>& pairs) {
    if (pairs.empty()) return false;
    // The anchors come in two groups: at start and at exit.
    const int64_t middle =
        pairs.front().torch_ns + (pairs.back().torch_ns - pairs.front().torch_ns) / 2;
    const ClockPair* first = nullptr;
    const ClockPair* last = nullptr;
    for (const ClockPair& p : pairs) {
      const ClockPair*& best = p.torch_ns <= middle ? first : last;
      if (!best || p.width_ns < best->width_ns) best = &p;
    }
    torch0_ = first->torch_ns;
    real0_ = first->real_ns;
    if (last && last->torch_ns - torch0_ > int64_t{10} * 1000000000) {
      const int64_t t1 = last->torch_ns, r1 = last->real_ns;
      const double slope = static_cast<double>(r1 - real0_) / static_cast<double>(t1 - torch0_);
      // A clock running more than 0.1 % off is a mismatch of the pairs, not a clock.
      if (slope > 0.999 && slope < 1.001) slope_ = slope;
    }
    return true;
  }
  int64_t ToReal(int64_t torch_ns) const {
    return real0_ + std::llround(static_cast<double>(torch_ns - torch0_) * slope_);
  }

 private:
  int64_t torch0_ = 0, real0_ = 0;
  double slope_ = 1;
};

bool IsName(const Trace& t, size_t i, std::string_view name) {
  return t.str(t.events.name(i)) == name;
}

std::string PidOf(const std::string& name, const std::string& prefix, const std::string& suffix) {
  return name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
}

void MergeOne(const std::string& json_path, const AnchorFile& anchor_file,
              const std::vector<RecordingWindow>& windows, int64_t origin_ns, TraceBuilder& to,
              SessionSummary& summary, std::vector<std::string>& warnings) {
  auto input = OpenInput(json_path);
  if (!input.ok()) {
    warnings.push_back("torch.profiler's trace: " + input.error().message);
    return;
  }
  auto read = MakeJsonTraceImporter()->Read(*input.value());
  if (!read.ok()) {
    warnings.push_back("torch.profiler's trace " + json_path +
                       " could not be read: " + read.error().message);
    return;
  }
  const Trace& from = *read.value();
  const int64_t pid = anchor_file.pid;
  // Anchors in time order, paired with the anchor file's lines in order.
  std::vector<size_t> anchor_events;
  for (size_t i = 0; i < from.events.size(); ++i)
    if (IsName(from, i, kAnchorName)) anchor_events.push_back(i);
  std::sort(anchor_events.begin(), anchor_events.end(),
            [&](size_t a, size_t b) { return from.events.ts(a) < from.events.ts(b); });
  std::vector<ClockPair> pairs;
  std::map<int64_t, int64_t> os_tid;  // torch's thread number -> OS tid
  for (size_t k = 0; k < anchor_events.size() && k < anchor_file.anchors.size(); ++k) {
    const size_t i = anchor_events[k];
    const Anchor& a = anchor_file.anchors[k];
    pairs.push_back(ClockPair{from.origin_ns + from.events.ts(i) + from.events.dur(i) / 2,
                              a.before_ns + (a.after_ns - a.before_ns) / 2,
                              a.after_ns - a.before_ns - from.events.dur(i)});
    const Ident& tid = from.tracks[from.events.track(i)].tid;
    if (!tid.is_string) os_tid[tid.number] = a.tid;
  }
  ClockMap clock;
  if (!clock.Fit(pairs)) {
    warnings.push_back(json_path + ": holds no " + kAnchorName +
                       " event: torch's clock cannot be placed; its events are left out");
    return;
  }
  std::vector<RecordingWindow> mine;
  bool whole_run = false;
  for (const RecordingWindow& w : windows) {
    if (w.pid != pid) continue;
    mine.push_back(w);
    whole_run |= w.whole_run;
  }
  if (mine.empty()) whole_run = true;  // no stream of this process: nothing to cut by
  auto in_window = [&](int64_t real_ns) {
    if (whole_run) return true;
    for (const RecordingWindow& w : mine)
      if (real_ns >= w.begin_ns && real_ns < w.end_ns) return true;
    return false;
  };
  auto is_process = [&](const Ident& p) {
    return p.is_string ? from.str(p.str) == kLegacyCpuPid : p.number == pid;
  };
  uint64_t operators = 0, memory = 0;
  AppendEvents(from, to, [&](size_t i, int64_t* ts, Ident* p, Ident* t, bool*) {
    if (IsName(from, i, kAnchorName) || IsName(from, i, kAnchorWarmupName)) return false;
    const bool process = is_process(*p);
    // Kineto's own lanes ("Spans", "Traces", and its unnamed end marker).
    if (p->is_string && !process) return false;
    if (process) {
      *p = Ident{pid};
      if (!t->is_string) {
        auto found = os_tid.find(t->number);
        if (found != os_tid.end()) t->number = found->second;
      }
    }
    if (from.events.phase(i) == 'M') {
      // The session names its processes and threads; device lanes keep torch's names.
      *ts = 0;
      return !process;
    }
    const int64_t real = clock.ToReal(from.origin_ns + *ts);
    if (!in_window(real)) return false;
    *ts = real - origin_ns;
    if (process && from.events.phase(i) == 'X') {
      const std::string_view category = from.category_name(from.events.category(i));
      if (category == "cpu_op" || category.empty()) ++operators;
    }
    if (IsName(from, i, "[memory]")) ++memory;
    return true;
  });
  summary.operators += operators;
  summary.ranges += operators;
  summary.memory_events += memory;
  if (const std::string* devices = from.FindMetadata("deviceProperties"))
    if (*devices != "[]") (void)to.AddMetadata("deviceProperties", *devices);
}

}  // namespace

std::vector<std::string> OperatorSources(const std::string& folder) {
  std::set<std::string> texts;
  for (const std::string& name : FilesLike(folder, kNotePrefix, ".txt")) {
    std::string text = ReadWhole(folder + "/" + name);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (!text.empty()) texts.insert(text);
  }
  return {texts.begin(), texts.end()};
}

bool HasTorchTraces(const std::string& folder) {
  return !FilesLike(folder, kTracePrefix, ".anchor").empty();
}

void MergeTorchTraces(const std::string& folder, const std::vector<RecordingWindow>& windows,
                      int64_t origin_ns, TraceBuilder& to, SessionSummary& summary,
                      std::vector<std::string>& warnings) {
  std::set<std::string> merged;
  for (const std::string& name : FilesLike(folder, kTracePrefix, ".anchor")) {
    const std::string base = folder + "/" + name.substr(0, name.size() - strlen(".anchor"));
    auto anchor = ReadAnchorFile(folder + "/" + name);
    if (!anchor.ok()) {
      warnings.push_back("torch.profiler's trace left out: " + anchor.error().message);
      continue;
    }
    merged.insert(std::to_string(anchor.value().pid));
    MergeOne(base + ".json", anchor.value(), windows, origin_ns, to, summary, warnings);
  }
  // A process that started the fallback writes its trace at exit: one killed never did.
  for (const std::string& name : FilesLike(folder, kNotePrefix, ".txt")) {
    const std::string pid = PidOf(name, kNotePrefix, ".txt");
    if (merged.count(pid) == 0 && ReadWhole(folder + "/" + name).starts_with("torch.profiler"))
      warnings.push_back("process " + pid +
                         " did not exit normally: torch.profiler's operators of it were not "
                         "written (the NVTX and ITT ranges are kept)");
  }
}

}  // namespace profsh
