#include "engine/importers/session_reader.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <queue>
#include <unordered_map>

#include "engine/collector/stream_format.h"
#include "engine/importers/stream_blocks.h"
#include "engine/importers/stream_decoder.h"
#include "engine/trace/trace_builder.h"
#include "engine/util/json_text.h"
#include "engine/util/utf8.h"

namespace profsh {

namespace {

namespace st = stream;

struct ClockPair {
  uint64_t ticks;
  int64_t mono;
  int64_t real;
};

struct StreamFile {
  std::string path;
  std::unique_ptr<InputSource> input;
  std::vector<Block> blocks;
  bool cut = false;  // the last block was incomplete
  size_t cut_at = 0;
  bool ended = false;  // kEnd seen, or kExec without kExecFailed after it
  uint8_t end_reason = 0;
  int64_t pid = 0, ppid = 0, start_ns = 0;
  uint32_t exec_index = 0, clock_kind = 0;
  bool is_last_image = true;  // no later exec of this pid: its command line names the process
  std::string cmdline, exe, host, exec_path;
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<ClockPair> clocks;
  // ticks -> absolute ns
  double slope = 1;
  uint64_t ticks0 = 0;
  int64_t real0 = 0;
  bool fitted = false;
};

std::string Where(const StreamFile& f, size_t offset) {
  return f.path + ": block at byte " + std::to_string(offset);
}

// Reads the file header and splits the stream into blocks; decodes kProcess and kClock.
Result<StreamFile> OpenStreamFile(const std::string& path) {
  StreamFile f;
  f.path = path;
  auto input = OpenInput(path);
  if (!input.ok()) return input.error();
  f.input = std::move(input.value());
  std::string_view data = f.input->WholeContent();
  if (data.empty() || f.input->compressed())
    return Error{path + ": not a profsh stream (expected an uncompressed .pstream file)"};
  if (data.size() < sizeof(st::FileHeader) || std::memcmp(data.data(), st::kMagic, 8) != 0) {
    return Error{path + ": not a profsh stream (bad magic)"};
  }
  st::FileHeader header;
  std::memcpy(&header, data.data(), sizeof header);
  if (header.version != st::kVersion) {
    return Error{path + ": stream version " + std::to_string(header.version) +
                 ", this profsh reads version " + std::to_string(st::kVersion)};
  }
  size_t pos = header.header_size >= sizeof header && header.header_size <= data.size()
                   ? header.header_size
                   : sizeof header;
  while (pos < data.size()) {
    if (data.size() - pos < sizeof(st::BlockHeader)) {
      f.cut = true;
      f.cut_at = pos;
      break;
    }
    st::BlockHeader h;
    std::memcpy(&h, data.data() + pos, sizeof h);
    if (h.size > data.size() - pos - sizeof h) {
      f.cut = true;
      f.cut_at = pos;
      break;
    }
    f.blocks.push_back({h.type, data.substr(pos + sizeof h, h.size), pos});
    pos += sizeof h + h.size;
  }
  bool have_process = false;
  for (const Block& b : f.blocks) {
    Cursor c(b.payload);
    if (b.type == st::kProcess && !have_process) {
      f.pid = c.Fixed<int64_t>();
      f.ppid = c.Fixed<int64_t>();
      f.start_ns = c.Fixed<int64_t>();
      f.exec_index = c.Fixed<uint32_t>();
      f.clock_kind = c.Fixed<uint32_t>();
      f.cmdline = ValidUtf8(c.Str());
      std::replace(f.cmdline.begin(), f.cmdline.end(), '\0', ' ');
      f.exe = ValidUtf8(c.Str());
      f.host = ValidUtf8(c.Str());
      uint64_t n = c.Varint();
      for (uint64_t i = 0; i < n && c.ok; ++i) {
        std::string key = ValidUtf8(c.Str());
        std::string value = ValidUtf8(c.Str());
        f.env.emplace_back(std::move(key), std::move(value));
      }
      if (!c.ok) return Error{Where(f, b.offset) + ": malformed process block"};
      have_process = true;
    } else if (b.type == st::kClock) {
      ClockPair p{c.Fixed<uint64_t>(), c.Fixed<int64_t>(), c.Fixed<int64_t>()};
      if (!c.ok) return Error{Where(f, b.offset) + ": malformed clock block"};
      f.clocks.push_back(p);
    } else if (b.type == st::kEnd) {
      f.ended = true;
      f.end_reason = c.Fixed<uint8_t>();
    } else if (b.type == st::kExec) {
      f.ended = true;
      f.end_reason = st::kEndExec;
      f.exec_path = ValidUtf8(c.Str());
    } else if (b.type == st::kExecFailed) {
      f.ended = false;
      f.end_reason = 0;
    }
  }
  if (!have_process)
    return Error{path + ": the stream has no process block (cut short at creation?)"};
  if (f.clock_kind != st::kClockTsc && f.clock_kind != st::kClockMonotonic) {
    return Error{path + ": unknown clock kind " + std::to_string(f.clock_kind)};
  }
  return f;
}

// ticks -> realtime: the rate from the monotonic clock over the stream's whole span (realtime
// may be stepped by NTP), the offset from realtime at the first pair.
void FitClock(StreamFile& f) {
  if (f.clocks.empty()) return;
  const ClockPair& a = f.clocks.front();
  const ClockPair& b = f.clocks.back();
  f.ticks0 = a.ticks;
  f.real0 = a.real;
  if (f.clock_kind == st::kClockMonotonic) {
    f.slope = 1;
    f.ticks0 = static_cast<uint64_t>(a.mono);
    f.real0 = a.real;
    f.fitted = true;
  } else if (b.ticks > a.ticks + 1000000 && b.mono > a.mono) {
    f.slope = static_cast<double>(b.mono - a.mono) / static_cast<double>(b.ticks - a.ticks);
    f.real0 = a.real;
    f.fitted = true;
  }
}

// What a session lost or had to repair: a member of the "profsh" metadata and a warning each.
struct Loss {
  uint64_t SessionSummary::*count;
  const char* key;
  const char* warning;      // after a count of 2 or more
  const char* warning_one;  // after a count of 1
};
constexpr Loss kLosses[] = {
    {&SessionSummary::dropped_ranges, "dropped_ranges",
     "ranges not recorded: a thread's buffer was full (raise PROFSH_BUFFER_KB)",
     "range not recorded: a thread's buffer was full (raise PROFSH_BUFFER_KB)"},
    {&SessionSummary::dropped_events, "dropped_events",
     "events not recorded: a thread's buffer was full (raise PROFSH_BUFFER_KB)",
     "event not recorded: a thread's buffer was full (raise PROFSH_BUFFER_KB)"},
    {&SessionSummary::events_without_slot, "events_without_thread_slot",
     "events of threads beyond the collector's 1024 thread slots were not recorded",
     "event of a thread beyond the collector's 1024 thread slots was not recorded"},
    {&SessionSummary::strings_refused, "strings_refused",
     "names were refused (the collector's string table was full)",
     "name was refused (the collector's string table was full)"},
    {&SessionSummary::metadata_refused, "metadata_refused",
     "domain, counter or thread names were refused (the collector's queue was full)",
     "domain, counter or thread name was refused (the collector's queue was full)"},
    {&SessionSummary::events_after_close, "events_after_close",
     "events came after their process had written its end (late destructors); not recorded",
     "event came after its process had written its end (a late destructor); not recorded"},
    {&SessionSummary::late_events, "late_events",
     "events reached profsh after their window had been handed over; left out",
     "event reached profsh after its window had been handed over; left out"},
    {&SessionSummary::unmatched_pops, "pops_without_push",
     "pops (or ends) without a matching push (or begin)",
     "pop (or end) without a matching push (or begin)"},
    {&SessionSummary::unknown_range_ends, "ends_of_unknown_ranges",
     "ends of range ids that were never started", "end of a range id that was never started"},
    {&SessionSummary::open_at_thread_exit, "ranges_open_at_thread_exit",
     "ranges were still open when their thread exited (ended there)",
     "range was still open when its thread exited (ended there)"},
    {&SessionSummary::open_at_end, "ranges_open_at_end",
     "ranges were still open when their process ended or was killed (ended at its last event)",
     "range was still open when its process ended or was killed (ended at its last event)"},
    {&SessionSummary::cut_streams, "streams_cut_short",
     "processes did not finish their stream (killed, or still running); events up to their last "
     "drain are kept",
     "process did not finish its stream (killed, or still running); events up to its last "
     "drain are kept"},
};

std::string ProfshMetadata(const std::vector<StreamFile>& files, const SessionSummary& sum,
                           const std::string& path) {
  std::string j = "{\"session\": ";
  AppendJsonString(&j, path);
  j += ", \"processes\": [";
  for (size_t i = 0; i < files.size(); ++i) {
    const StreamFile& f = files[i];
    if (i) j += ", ";
    j += "{\"pid\": " + std::to_string(f.pid) + ", \"ppid\": " + std::to_string(f.ppid) +
         ", \"exec_index\": " + std::to_string(f.exec_index) + ", \"command\": ";
    AppendJsonString(&j, f.cmdline);
    j += ", \"executable\": ";
    AppendJsonString(&j, f.exe);
    j += ", \"host\": ";
    AppendJsonString(&j, f.host);
    j += ", \"ended\": ";
    AppendJsonString(&j, !f.ended                           ? "cut short (killed, or still running)"
                         : f.end_reason == stream::kEndExec ? "exec " + f.exec_path
                         : f.end_reason == stream::kEndUnderscoreExit ? "_exit"
                                                                      : "exit");
    j += ", \"environment\": {";
    for (size_t k = 0; k < f.env.size(); ++k) {
      if (k) j += ", ";
      AppendJsonString(&j, f.env[k].first);
      j += ": ";
      AppendJsonString(&j, f.env[k].second);
    }
    j += "}}";
  }
  j += "]";
  for (const Loss& loss : kLosses)
    j += ", \"" + std::string(loss.key) + "\": " + std::to_string(sum.*loss.count);
  j += ", ";
  j += kMemoryByThreadMember;
  j += "}";
  return j;
}

Result<std::vector<std::string>> StreamPaths(const std::string& path, bool* folder) {
  struct stat st_buf;
  if (stat(path.c_str(), &st_buf) != 0)
    return Error{path + ": cannot open: " + std::strerror(errno)};
  *folder = S_ISDIR(st_buf.st_mode);
  if (!*folder) return std::vector<std::string>{path};
  DIR* d = opendir(path.c_str());
  if (d == nullptr) return Error{path + ": cannot read the folder: " + std::strerror(errno)};
  std::vector<std::string> out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() > std::strlen(st::kFileSuffix) && name.ends_with(st::kFileSuffix))
      out.push_back(path + "/" + name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  if (out.empty()) {
    return Error{path + ": is a directory, and holds no profsh streams (*" +
                 std::string(st::kFileSuffix) + ")"};
  }
  return out;
}

}  // namespace

bool IsSessionFolder(const std::string& path) {
  bool folder = false;
  auto paths = StreamPaths(path, &folder);
  return paths.ok() && folder;
}

Result<SessionLoad> LoadSession(const std::string& path) {
  bool folder = false;
  auto paths = StreamPaths(path, &folder);
  if (!paths.ok()) return paths.error();
  std::vector<StreamFile> files;
  for (const std::string& p : paths.value()) {
    auto f = OpenStreamFile(p);
    if (!f.ok()) return f.error();
    files.push_back(std::move(f.value()));
  }
  // Clocks: a TSC stream too short to measure the tick rate borrows the longest one's.
  const StreamFile* reference = nullptr;
  for (StreamFile& f : files) {
    FitClock(f);
    if (f.fitted && f.clock_kind == st::kClockTsc &&
        (!reference || f.clocks.back().ticks - f.clocks.front().ticks >
                           reference->clocks.back().ticks - reference->clocks.front().ticks)) {
      reference = &f;
    }
  }
  SessionLoad out;
  out.trace = std::make_unique<Trace>();
  std::vector<std::string> warnings;
  for (StreamFile& f : files) {
    if (f.fitted || f.clocks.empty()) continue;
    const ClockPair& a = f.clocks.front();
    const ClockPair& b = f.clocks.back();
    if (reference) {
      f.slope = reference->slope;
    } else if (b.ticks > a.ticks && b.mono > a.mono) {
      // A short process measures its own rate roughly, but its times span too little for the
      // error to matter.
      f.slope = static_cast<double>(b.mono - a.mono) / static_cast<double>(b.ticks - a.ticks);
    } else {
      f.slope = 1.0 / 3.0;
      warnings.push_back(
          f.path + ": no clock rate could be measured (one clock sample); its times are estimates");
    }
  }
  std::sort(files.begin(), files.end(), [](const StreamFile& a, const StreamFile& b) {
    return a.pid != b.pid ? a.pid < b.pid : a.exec_index < b.exec_index;
  });
  for (size_t i = 0; i + 1 < files.size(); ++i)
    files[i].is_last_image = files[i].pid != files[i + 1].pid;
  int64_t origin = INT64_MAX;
  for (const StreamFile& f : files) origin = std::min(origin, f.start_ns);

  Trace& trace = *out.trace;
  TraceBuilder builder(trace);
  builder.SetFormat("profsh-session");
  trace.source_path = path;
  trace.origin_ns = origin;
  trace.has_origin = true;
  SessionSummary& sum = out.summary;
  // Every window of every process goes into the one trace.
  class MergedSink final : public WindowSink {
   public:
    MergedSink(TraceBuilder& b, int64_t origin) : builder_(b), origin_(origin) {}
    TraceBuilder& Open(const WindowInfo&, int64_t* origin_ns) override {
      *origin_ns = origin_;
      return builder_;
    }
    void Sealed(const WindowInfo&) override {}

   private:
    TraceBuilder& builder_;
    int64_t origin_;
  } sink(builder, origin);
  for (StreamFile& f : files) {
    if (f.clocks.empty()) {
      warnings.push_back(f.path + ": no clock block; its events are skipped");
      continue;
    }
    StreamDecoder decoder(f.path, sink, sum, warnings);
    decoder.SetClock(f.ticks0, f.real0, f.slope);
    std::string_view data = f.input->WholeContent();
    Status s = decoder.PreloadBoundaries(data);
    if (!s.ok()) return Error{s.message()};
    auto fed = decoder.Feed(data, 0);
    if (!fed.ok()) return fed.error();
    decoder.SetLastImage(f.is_last_image);
    decoder.Finish();
    sum.stream_bytes += data.size();
    ++sum.processes;
    if (!f.ended) ++sum.cut_streams;
    if (f.cut) {
      warnings.push_back(f.path + ": ends in a partial block at byte " + std::to_string(f.cut_at) +
                         " (the process was killed while writing); everything before it is read");
    }
  }
  for (const Loss& loss : kLosses) {
    if (uint64_t n = sum.*loss.count; n > 0)
      warnings.push_back(std::to_string(n) + " " + (n == 1 ? loss.warning_one : loss.warning));
  }
  for (const std::string& n : sum.notices) warnings.push_back(n);
  Status st = builder.AddMetadata("profsh", ProfshMetadata(files, sum, path));
  if (!st.ok()) return Error{st.message()};
  st = builder.Finish();
  if (!st.ok()) return Error{st.message()};
  trace.warnings.insert(trace.warnings.end(), warnings.begin(), warnings.end());
  trace.memory_by_thread = true;
  return out;
}

namespace {

class StreamImporter final : public Importer {
 public:
  std::string_view name() const override { return "profsh-stream"; }
  bool CanRead(std::string_view head) const override {
    return head.size() >= 8 && std::memcmp(head.data(), st::kMagic, 8) == 0;
  }
  Result<std::unique_ptr<Trace>> Read(InputSource& input) const override {
    auto load = LoadSession(input.path());
    if (!load.ok()) return load.error();
    return std::move(load.value().trace);
  }
};

}  // namespace

std::unique_ptr<Importer> MakeStreamImporter() {
  return std::make_unique<StreamImporter>();
}

}  // namespace profsh
