#include "engine/session/recording.h"

#include <algorithm>

#include <sys/stat.h>

#include "engine/recording/signal_forwarding.h"
#include "engine/util/human_text.h"

namespace profsh {

namespace {

// "2 cc1plus, 1 as": how many left-out process images ran each program, the most first.
std::string CountPrograms(const std::vector<std::string>& programs) {
  std::vector<std::pair<std::string, uint64_t>> counts;
  for (const std::string& p : programs) {
    auto it =
        std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == p; });
    if (it == counts.end()) {
      counts.emplace_back(p, 1);
    } else {
      ++it->second;
    }
  }
  std::stable_sort(counts.begin(), counts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [program, n] : counts)
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + program;
  return out;
}

// Why a recording the workload made cannot be read, and where what is left of it lies.
Error Unreadable(const LaunchResult& launch, const std::string& why) {
  std::string ran = "the workload ran (exit status " + std::to_string(launch.exit_code) + ")";
  struct stat st;
  if (stat(launch.session.c_str(), &st) != 0) {
    return Error{ran + " but its session folder " + launch.session +
                 " was removed while it ran: nothing of the recording is left"};
  }
  return Error{ran + " but its recording could not be read: " + why + "; the streams are kept in " +
               launch.session};
}

// How the workload ended, for a stream it left without an end; its children are looked up.
ProcessEndings EndingsOf(const LaunchResult& launch) {
  ProcessEndings endings;
  endings.just_recorded = true;
  if (launch.still_running) {
    endings.known[launch.pid] = "still running when profsh stopped waiting";
  } else if (launch.term_signal) {
    endings.known[launch.pid] = "killed by " + SignalName(launch.term_signal);
  }
  return endings;
}

}  // namespace

Result<Recording> RecordWorkload(const LaunchOptions& options, bool keep_session,
                                 LaunchResult* ran) {
  auto launched = RunWorkload(options);
  if (!launched.ok()) return launched.error();
  Recording r;
  r.launch = std::move(launched.value());
  if (ran) *ran = r.launch;
  auto session = LoadSession(r.launch.session, EndingsOf(r.launch));
  if (!session.ok()) return Unreadable(r.launch, session.error().message);
  r.session = std::move(session.value());
  for (const std::string& n : r.launch.notices)
    r.session.trace->warnings.insert(r.session.trace->warnings.begin(), n);
  if (keep_session) {
    r.session_kept = true;
  } else {
    RemoveSessionFolder(r.launch.session);
    r.session.trace->source_path = "profsh run";
  }
  return r;
}

Result<LiveRecording> RecordWorkloadLive(LaunchOptions options, bool keep_session,
                                         const LiveCallbacks& callbacks, LaunchResult* ran) {
  auto folder = CreateSessionFolder();
  if (!folder.ok()) return folder.error();
  auto control = ControlChannel::Create(folder.value());
  if (!control.ok()) {
    RemoveSessionFolder(folder.value());
    return control.error();
  }
  LiveSession live(folder.value(), options.gpu_wait_ms);
  if (std::find(options.activities.begin(), options.activities.end(), "cpu") !=
      options.activities.end())
    live.SampleCpu();
  LiveRecording r;
  Status failed = Status::Ok();
  auto deliver = [&](Result<std::vector<WindowTrace>> windows) {
    if (!windows.ok()) {
      if (failed.ok()) failed = Status(windows.error());
      return;
    }
    for (WindowTrace& w : windows.value()) {
      ++r.windows;
      if (callbacks.window) callbacks.window(std::move(w), *control.value());
    }
  };
  options.session = folder.value();
  options.launched = callbacks.launched;
  options.poll = [&] {
    if (callbacks.poll) callbacks.poll(*control.value());
    if (failed.ok()) deliver(live.Poll());
    if (failed.ok() && callbacks.inspect) callbacks.inspect(live, *control.value());
  };
  if (callbacks.started) callbacks.started(folder.value());
  auto launched = RunWorkload(options);
  if (!launched.ok()) {
    RemoveSessionFolder(folder.value());
    return launched.error();
  }
  r.launch = std::move(launched.value());
  if (ran) *ran = r.launch;
  // A backlog's windows a batch at a time (a flight recorder keeps few of them), then the end.
  while (failed.ok() && live.Behind()) deliver(live.Poll());
  if (failed.ok()) deliver(live.Finish());
  if (!failed.ok()) return Unreadable(r.launch, failed.message());
  r.summary = live.summary();
  r.warnings = r.launch.notices;
  r.warnings.insert(r.warnings.end(), live.warnings().begin(), live.warnings().end());
  // What the collector itself noticed (step boundaries the step log had no room for, ...).
  r.warnings.insert(r.warnings.end(), r.summary.notices.begin(), r.summary.notices.end());
  if (!keep_session) RemoveSessionFolder(r.launch.session);
  return r;
}

std::string DescribeRecording(const SessionSummary& s) {
  std::string out = Plural(s.processes, "process", "processes") + ", " +
                    Plural(s.threads, "thread", "threads") + ", " +
                    Plural(s.ranges, "range", "ranges") + ", " + Plural(s.marks, "mark", "marks");
  if (s.counter_values) out += ", " + Plural(s.counter_values, "counter value", "counter values");
  if (s.gpu_kernels || s.gpu_copies || s.gpu_sets || s.gpu_calls) {
    out += "; GPU: " + Plural(s.gpu_kernels, "kernel", "kernels") + ", " +
           Plural(s.gpu_copies, "copy", "copies") + ", " + Plural(s.gpu_sets, "set", "sets") +
           ", " + Plural(s.gpu_calls, "CUDA call", "CUDA calls");
    if (s.gpu_calls_left_out)
      out += " (and " + std::to_string(s.gpu_calls_left_out) +
             " queries left out, as Kineto leaves them out)";
    if (s.gpu_records_dropped)
      out += " (" + std::to_string(s.gpu_records_dropped) + " records dropped by CUPTI)";
  }
  out += "; " + std::to_string(s.stream_bytes) + " bytes of streams";
  uint64_t lost = s.dropped_ranges + s.dropped_events + s.events_without_slot;
  out += lost ? "; " + std::to_string(s.dropped_ranges) + " ranges and " +
                    std::to_string(s.dropped_events + s.events_without_slot) +
                    " other events dropped"
              : "; nothing dropped";
  if (s.memory_processes_left_out) {
    out += "; memory of " + Plural(s.memory_processes_left_out, "process", "processes") +
           " not recorded (" + CountPrograms(s.memory_left_out_programs) +
           "; not the command, Python or torch; --profile-memory=all records them)";
  }
  for (size_t i = 0; i < s.operator_sources.size(); ++i)
    out += (i == 0 ? "; operators: " : ", ") + s.operator_sources[i];
  if (!s.sampling_method.empty()) {
    out += "; " + Plural(s.cpu_samples, "CPU sample", "CPU samples") + " by " + s.sampling_method;
    if (s.samples_outside_windows)
      out +=
          " (" + std::to_string(s.samples_outside_windows) + " more outside the windows, left out)";
  }
  return out;
}

}  // namespace profsh
