#include "engine/session/recording.h"

#include "engine/util/human_text.h"

namespace profsh {

Result<Recording> RecordWorkload(const LaunchOptions& options, bool keep_session) {
  auto launched = RunWorkload(options);
  if (!launched.ok()) return launched.error();
  Recording r;
  r.launch = std::move(launched.value());
  auto session = LoadSession(r.launch.session);
  if (!session.ok()) {
    return Error{"the workload ran (exit status " + std::to_string(r.launch.exit_code) +
                 ") but its recording could not be read: " + session.error().message +
                 "; the streams are kept in " + r.launch.session};
  }
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
                                         const LiveCallbacks& callbacks) {
  auto folder = CreateSessionFolder();
  if (!folder.ok()) return folder.error();
  auto control = ControlChannel::Create(folder.value());
  if (!control.ok()) {
    RemoveSessionFolder(folder.value());
    return control.error();
  }
  LiveSession live(folder.value());
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
  };
  if (callbacks.started) callbacks.started(folder.value());
  auto launched = RunWorkload(options);
  if (!launched.ok()) {
    RemoveSessionFolder(folder.value());
    return launched.error();
  }
  r.launch = std::move(launched.value());
  if (failed.ok()) deliver(live.Finish());
  if (!failed.ok()) {
    return Error{"the workload ran (exit status " + std::to_string(r.launch.exit_code) +
                 ") but its recording could not be read: " + failed.message() +
                 "; the streams are kept in " + r.launch.session};
  }
  r.summary = live.summary();
  r.warnings = r.launch.notices;
  r.warnings.insert(r.warnings.end(), live.warnings().begin(), live.warnings().end());
  if (!keep_session) RemoveSessionFolder(r.launch.session);
  return r;
}

std::string DescribeRecording(const SessionSummary& s) {
  std::string out = Plural(s.processes, "process", "processes") + ", " +
                    Plural(s.threads, "thread", "threads") + ", " +
                    Plural(s.ranges, "range", "ranges") + ", " + Plural(s.marks, "mark", "marks");
  if (s.counter_values) out += ", " + Plural(s.counter_values, "counter value", "counter values");
  out += "; " + std::to_string(s.stream_bytes) + " bytes of streams";
  uint64_t lost = s.dropped_ranges + s.dropped_events + s.events_without_slot;
  out += lost ? "; " + std::to_string(s.dropped_ranges) + " ranges and " +
                    std::to_string(s.dropped_events + s.events_without_slot) +
                    " other events dropped"
              : "; nothing dropped";
  return out;
}

}  // namespace profsh
