#include "repl/flight_run.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "bindings/flight_triggers.h"
#include "engine/exporters/exporter.h"
#include "engine/io/paths.h"
#include "engine/recording/signal_forwarding.h"
#include "engine/util/human_text.h"
#include "repl/run_command.h"

namespace profsh::repl {

namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const std::string t(suffix);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

// Saves each dump beside -o as a live window is saved, and says so.
uint64_t SaveDumps(std::vector<FlightDump> dumps, const std::string& output,
                   std::vector<std::string>* paths = nullptr) {
  uint64_t not_saved = 0;
  for (FlightDump& d : dumps) {
    const WindowInfo& info = d.window.info;
    const std::string path = WindowPath(output, info);
    const bool json = EndsWith(path, ".json") || EndsWith(path, ".json.gz");
    Status saved = ExportTrace(*d.window.trace, json ? "chrome" : "profsh", path);
    std::printf("== flight recorder dump %llu of pid %lld (steps %lld-%lld): %s\n",
                static_cast<unsigned long long>(info.index), static_cast<long long>(info.pid),
                static_cast<long long>(info.first_step), static_cast<long long>(info.last_step),
                d.reason.c_str());
    if (saved.ok()) {
      std::printf("saved %s\n", path.c_str());
      if (paths) paths->push_back(path);
      if (d.requested_at_ns != 0) {
        const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now().time_since_epoch())
                                .count();
        std::fprintf(stderr,
                     "profsh: flight recorder: dump %llu saved %.1f ms after its trigger (the "
                     "steps after it included)\n",
                     static_cast<unsigned long long>(info.index),
                     static_cast<double>(now - d.requested_at_ns) / 1e6);
      }
    } else {
      ++not_saved;
      std::printf("not saved: %s\n", saved.message().c_str());
    }
    std::fflush(stdout);
  }
  return not_saved;
}

}  // namespace

bool ParseFlightRecorderSpan(const std::string& text, FlightRecorderOptions* options) {
  const bool seconds = !text.empty() && text.back() == 's';
  const std::string digits = seconds ? text.substr(0, text.size() - 1) : text;
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  const int64_t n = std::atoll(digits.c_str());
  if (n <= 0) return false;
  options->steps = seconds ? 0 : n;
  options->seconds = seconds ? n : 0;
  return true;
}

Result<std::unique_ptr<StepTrigger>> MakeTrigger(const std::string& spec) {
  if (IsBuiltInTrigger(spec)) return MakeBuiltInTrigger(spec);
  return lua::MakeExpressionTrigger(spec);
}

int RunFlightRecorder(LaunchOptions& launch, std::string output, FlightSettings settings,
                      bool keep_session) {
  if (output.empty()) output = NewTracePath("profsh");
  FlightRecorder recorder(settings.options);
  for (auto& t : settings.triggers) recorder.AddTrigger(std::move(t));
  uint64_t not_saved = 0;
  auto tell = [&] {
    for (const std::string& n : recorder.TakeNotices())
      std::fprintf(stderr, "profsh: flight recorder: %s\n", n.c_str());
  };
  // Dumps on demand, on SIGUSR2 and on hangs, and other processes' share of a trigger's span.
  FlightDumps other_dumps(recorder, settings.watchdog, [&](std::vector<FlightDump> d) {
    std::vector<std::string> paths;
    not_saved += SaveDumps(std::move(d), output, &paths);
    return paths;
  });
  LiveCallbacks callbacks;
  callbacks.started = [&](const std::string& session) { other_dumps.Started(session); };
  callbacks.inspect = [&](LiveSession& live, ControlChannel& control) {
    other_dumps.Inspect(live, control);
  };
  callbacks.window = [&](WindowTrace w, ControlChannel&) {
    const uint64_t dropped = w.dropped_so_far;
    std::vector<FlightDump> made = recorder.AddStep(std::move(w), dropped);
    other_dumps.AlsoDumpOthers(made);
    not_saved += SaveDumps(std::move(made), output);
    tell();
  };
  LaunchResult ran;
  ran.exit_code = -1;
  auto recorded = RecordWorkloadLive(launch, keep_session, callbacks, &ran);
  other_dumps.Close();
  if (!recorded.ok()) {
    std::fprintf(stderr, "profsh run: %s\n", recorded.error().message.c_str());
    return ran.exit_code >= 0 ? ran.exit_code : 127;
  }
  LiveRecording& r = recorded.value();
  not_saved += SaveDumps(recorder.Finish(), output);
  // A workload that failed leaves its last steps behind, as a flight recorder would.
  if (r.launch.exit_code != 0) {
    const std::string why =
        r.launch.term_signal
            ? "the workload was killed by " + SignalName(r.launch.term_signal)
            : "the workload exited with status " + std::to_string(r.launch.exit_code);
    not_saved += SaveDumps(recorder.Dump(0, INT64_MIN, INT64_MAX, why), output);
  }
  tell();
  ReportSignals(launch, r.launch);
  for (const std::string& w : r.warnings) std::fprintf(stderr, "profsh: warning: %s\n", w.c_str());
  const FlightRecorder::Stats& s = recorder.stats();
  std::fprintf(stderr,
               "profsh: flight recorder: %s seen%s, %s kept at the end (%llu bytes; at most %llu "
               "steps and %llu bytes at once), %s fired, %s saved\n",
               Plural(s.steps_seen, "step", "steps").c_str(),
               s.steps_seen == 0 ? WhyNoWindow(launch, r).c_str() : "",
               Plural(s.steps_kept, "step", "steps").c_str(),
               static_cast<unsigned long long>(s.bytes_kept),
               static_cast<unsigned long long>(s.peak_steps_kept),
               static_cast<unsigned long long>(s.peak_bytes_kept),
               Plural(s.triggers_fired, "trigger", "triggers").c_str(),
               Plural(s.dumps, "dump", "dumps").c_str());
  if (other_dumps.hangs() > 0) {
    std::fprintf(stderr, "profsh: watchdog: %s dumped%s\n",
                 Plural(other_dumps.hangs(), "hang", "hangs").c_str(),
                 other_dumps.killed() ? ", and the workload killed (--watchdog-kill)" : "");
  }
  std::fprintf(stderr, "profsh: %s\n", DescribeRecording(r.summary).c_str());
  if (r.launch.term_signal) {
    std::fprintf(stderr, "profsh: %s was killed by %s\n", launch.argv[0].c_str(),
                 SignalName(r.launch.term_signal).c_str());
  }
  if (not_saved > 0) {
    std::fprintf(stderr, "profsh run: %s not saved\n",
                 Plural(not_saved, "dump was", "dumps were").c_str());
    return ExitStatusWhenNotSaved(r.launch.exit_code);
  }
  return r.launch.exit_code;
}

}  // namespace profsh::repl
