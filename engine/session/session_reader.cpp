#include "engine/session/session_reader.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <queue>
#include <unordered_map>

#include "engine/decoding/stream_clock.h"
#include "engine/decoding/stream_decoder.h"
#include "engine/session/cut_streams.h"
#include "engine/session/sample_reader.h"
#include "engine/session/torch_fallback.h"
#include "engine/stream/stream_format.h"
#include "engine/trace/trace_builder.h"
#include "engine/util/json_text.h"
#include "engine/util/utf8.h"

namespace profsh {

namespace {

namespace st = stream;

struct StreamFile {
  std::string path;
  std::unique_ptr<InputSource> input;
  StreamOutline outline;
  bool is_last_image = true;  // no later exec of this pid: its command line names the process
  ClockFit clock;
};

Result<StreamFile> OpenStreamFile(const std::string& path) {
  StreamFile f;
  f.path = path;
  auto input = OpenInput(path);
  if (!input.ok()) return input.error();
  f.input = std::move(input.value());
  std::string_view data = f.input->WholeContent();
  if (data.empty() || f.input->compressed())
    return Error{path + ": not a profsh stream (expected an uncompressed .pstream file)"};
  auto outline = OutlineStream(path, data);
  if (!outline.ok()) return outline.error();
  f.outline = std::move(outline.value());
  f.clock = FitClock(f.outline.clocks, f.outline.process.clock_kind);
  return f;
}

std::string ProfshMetadata(const std::vector<StreamFile>& files, const SessionSummary& sum,
                           const std::string& path) {
  std::string j = "{\"session\": ";
  AppendJsonString(&j, path);
  j += ", \"processes\": [";
  for (size_t i = 0; i < files.size(); ++i) {
    const StreamProcess& f = files[i].outline.process;
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
  for (const SummaryCount& c : kSummaryCounts) {
    if (c.IsLoss()) j += ", \"" + std::string(c.key) + "\": " + std::to_string(c.Value(sum));
  }
  // A run with the cpu activity says so even when no sample was taken (t:samples is then empty,
  // not an error).
  if (!sum.sampling_method.empty()) {
    j += ", \"sampling\": ";
    AppendJsonString(&j, sum.sampling_method);
  }
  j += ", ";
  j += kMemoryByThreadMember;
  j += "}";
  return j;
}

// The pid a stream file is named after ("PID-N.pstream"); 0 when the name says none.
int64_t PidOfStreamFile(const std::string& path) {
  const size_t slash = path.rfind('/');
  const char* first = path.c_str() + (slash == std::string::npos ? 0 : slash + 1);
  int64_t pid = 0;
  std::from_chars(first, path.c_str() + path.size(), pid);
  return pid;
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

std::vector<std::string> SampleFiles(const std::string& folder) {
  std::vector<std::string> out;
  if (DIR* d = opendir(folder.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.ends_with(st::kSamplesSuffix)) out.push_back(folder + "/" + name);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool IsSessionFolder(const std::string& path) {
  bool folder = false;
  auto paths = StreamPaths(path, &folder);
  return paths.ok() && folder;
}

Result<SessionLoad> LoadSession(const std::string& path, const ProcessEndings& endings) {
  bool folder = false;
  auto paths = StreamPaths(path, &folder);
  if (!paths.ok()) return paths.error();
  std::vector<StreamFile> files;
  // A process that forked (a daemon) or started just before the folder was read may have created
  // its stream and not yet drained into it: an empty file is a stream cut short, not bad input.
  std::vector<int64_t> empty_streams;
  for (const std::string& p : paths.value()) {
    if (struct stat st_buf; folder && stat(p.c_str(), &st_buf) == 0 && st_buf.st_size == 0) {
      empty_streams.push_back(PidOfStreamFile(p));
      continue;
    }
    auto f = OpenStreamFile(p);
    if (!f.ok()) return f.error();
    files.push_back(std::move(f.value()));
  }
  // Clocks: a TSC stream too short to measure the tick rate borrows the longest one's.
  const StreamFile* reference = nullptr;
  for (const StreamFile& f : files) {
    if (f.clock.fitted && f.outline.process.clock_kind == st::kClockTsc &&
        (!reference || f.clock.span > reference->clock.span)) {
      reference = &f;
    }
  }
  SessionLoad out;
  out.trace = std::make_unique<Trace>();
  std::vector<std::string> warnings;
  for (StreamFile& f : files) {
    if (f.clock.fitted || f.outline.clocks.empty()) continue;
    if (reference) {
      f.clock.slope = reference->clock.slope;
    } else if (f.clock.slope == 0) {
      f.clock.slope = 1.0 / 3.0;
      warnings.push_back(
          f.path + ": no clock rate could be measured (one clock sample); its times are estimates");
    }
    // else: a short process measures its own rate roughly, but its times span too little for
    // the error to matter.
  }
  auto key = [](const StreamFile& f) {
    return std::make_pair(f.outline.process.pid, f.outline.process.exec_index);
  };
  std::sort(files.begin(), files.end(),
            [&](const StreamFile& a, const StreamFile& b) { return key(a) < key(b); });
  for (size_t i = 0; i + 1 < files.size(); ++i)
    files[i].is_last_image = files[i].outline.process.pid != files[i + 1].outline.process.pid;
  int64_t origin = INT64_MAX;
  for (const StreamFile& f : files) origin = std::min(origin, f.outline.process.start_ns);

  Trace& trace = *out.trace;
  TraceBuilder builder(trace);
  builder.SetFormat("profsh-session");
  trace.source_path = path;
  trace.origin_ns = origin;
  trace.has_origin = true;
  SessionSummary& sum = out.summary;
  // Every window of every process goes into the one trace; their spans are kept for torch's
  // profiler's traces, cut to the same windows.
  class MergedSink final : public WindowSink {
   public:
    MergedSink(TraceBuilder& b, int64_t origin) : builder_(b), origin_(origin) {}
    TraceBuilder& Open(const WindowInfo&, int64_t* origin_ns) override {
      *origin_ns = origin_;
      return builder_;
    }
    void Sealed(const WindowInfo& w) override {
      windows.push_back(RecordingWindow{w.pid, w.begin_ns, w.end_ns, w.reason == "whole run"});
    }
    void PythonCall(int64_t pid, int64_t tid, int64_t begin_ns, int64_t end_ns,
                    std::string_view name) override {
      python_calls.Add(pid, tid, begin_ns, end_ns, name);
    }
    std::vector<RecordingWindow> windows;
    PythonCalls python_calls;

   private:
    TraceBuilder& builder_;
    int64_t origin_;
  } sink(builder, origin);
  // The samples' times first: the Python calls kept are those some sample falls in.
  if (folder) {
    for (const std::string& samples : SampleFiles(path)) sink.python_calls.NoteSampleTimes(samples);
  }
  std::vector<CutStream> cut;
  for (StreamFile& f : files) {
    if (f.outline.clocks.empty()) {
      warnings.push_back(f.path + ": no clock block; its events are skipped");
      continue;
    }
    StreamDecoder decoder(f.path, sink, sum, warnings);
    decoder.SetStreamIndex(static_cast<uint32_t>(&f - files.data()));
    decoder.SetClock(f.clock.ticks0, f.clock.real0, f.clock.slope);
    std::string_view data = f.input->WholeContent();
    Status s = decoder.Preload(data);
    if (!s.ok()) return Error{s.message()};
    auto fed = decoder.Feed(data, 0);
    if (!fed.ok()) return fed.error();
    decoder.SetLastImage(f.is_last_image);
    decoder.Finish();
    sum.stream_bytes += data.size();
    ++sum.processes;
    if (!f.outline.process.ended) {
      ++sum.cut_streams;
      const StreamProcess& p = f.outline.process;
      cut.push_back(CutStream{p.pid, p.cmdline.empty() ? p.exe : p.cmdline});
    }
    if (f.outline.cut) {
      warnings.push_back(f.path + ": ends in a partial block at byte " +
                         std::to_string(f.outline.cut_at) +
                         " (the process was killed while writing); everything before it is read");
    }
  }
  for (int64_t pid : empty_streams) {
    ++sum.cut_streams;
    cut.push_back(CutStream{pid, "no event written yet"});
  }
  if (folder) {
    MergeTorchTraces(path, sink.windows, origin, builder, sum, warnings);
    sum.operator_sources = OperatorSources(path);
    // profsh's perf_event_open samples (one file), or the collector's timer samples (a file
    // per process).
    sink.python_calls.Sort();
    for (const std::string& samples : SampleFiles(path)) {
      Status s =
          ReadCpuSamples(samples, origin, sink.windows, sink.python_calls, builder, sum, warnings);
      if (!s.ok()) return Error{s.message()};
    }
  }
  for (const SummaryCount& c : kSummaryCounts) {
    if (c.count == &SessionSummary::cut_streams) continue;  // named below, with their processes
    if (int64_t n = c.Value(sum); c.IsLoss() && n > 0)
      warnings.push_back(std::to_string(n) + " " + c.Warning(n));
  }
  if (!cut.empty()) warnings.push_back(CutStreamsWarning(cut, endings));
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
