#include "engine/session/flight_dumps.h"

#include <signal.h>
#include <time.h>

#include <cstdio>

namespace profsh {

namespace {

int64_t RealtimeNs() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// The watchdog looks this often (it reads every process's open ranges).
constexpr int64_t kWatchdogCheckNs = 200 * 1000000;

}  // namespace

FlightDumps::FlightDumps(FlightRecorder& recorder, WatchdogSettings watchdog, Save save)
    : recorder_(recorder), settings_(watchdog), save_(std::move(save)) {
  if (settings_.seconds > 0)
    watchdog_ = std::make_unique<Watchdog>(static_cast<int64_t>(settings_.seconds * 1e9));
}

void FlightDumps::Started(const std::string& session) {
  auto s = OnDemandServer::Listen(session);
  if (!s.ok()) {
    std::fprintf(stderr,
                 "profsh run: dump requests (profsh trace --pid PID --dump) cannot be taken: %s\n",
                 s.error().message.c_str());
    return;
  }
  server_ = std::move(s.value());
  server_->RefuseTraces(
      "this run is a flight recorder, which records every step: profsh trace --pid PID --dump "
      "saves its ring");
}

int64_t FlightDumps::RingBegin(int64_t pid, int64_t now_ns) const {
  auto span = recorder_.KeptSpan(pid);
  if (!span && pid != 0) span = recorder_.KeptSpan(0);
  return span ? span->first : now_ns;
}

std::vector<std::string> FlightDumps::DumpAll(int64_t begin_ns, int64_t end_ns,
                                              const std::string& reason, const HangFinding* hang) {
  return save_(recorder_.DumpSpan(begin_ns, end_ns, reason, hang));
}

void FlightDumps::Inspect(LiveSession& live, ControlChannel& control) {
  if (server_) {
    server_->Poll(control);
    for (const OnDemandServer::DumpRequest& r : server_->TakeDumpRequests()) {
      const int64_t now = RealtimeNs();
      std::vector<std::string> paths =
          DumpAll(RingBegin(r.pid, now), now,
                  "on demand: profsh trace --pid " + std::to_string(r.pid) + " --dump", nullptr);
      if (paths.empty()) {
        server_->Dumped(r.client, Error{"the flight recorder holds no step yet (none has ended: "
                                        "does the workload mark its steps? --step-marker)"});
      } else {
        server_->Dumped(r.client, paths);
      }
    }
  }
  if (DumpSignal::Take()) {
    const int64_t now = RealtimeNs();
    DumpAll(RingBegin(0, now), now, "SIGUSR2 to profsh", nullptr);
  }
  if (!watchdog_) return;
  const int64_t now = RealtimeNs();
  if (now - last_check_ns_ < kWatchdogCheckNs) return;
  last_check_ns_ = now;
  std::optional<HangFinding> hang = watchdog_->Check(live.HangStates(), now);
  if (!hang) return;
  ++hangs_;
  std::fprintf(stderr, "profsh: %s\n%s", hang->reason.c_str(),
               HangReportText(hang->processes, hang->at_ns).c_str());
  // The ring up to the hang; a process with no step kept still has its open ranges dumped.
  DumpAll(RingBegin(hang->pid, now), hang->at_ns, hang->reason, &*hang);
  if (settings_.kill) {
    std::string pids;
    for (const ProcessHangState& p : hang->processes) {
      if (kill(static_cast<pid_t>(p.pid), SIGKILL) == 0) pids += " " + std::to_string(p.pid);
    }
    killed_ = true;
    std::fprintf(stderr, "profsh: --watchdog-kill: killed%s\n", pids.c_str());
  }
}

void FlightDumps::AlsoDumpOthers(const std::vector<FlightDump>& dumps) {
  for (const FlightDump& d : dumps) {
    const WindowInfo& info = d.window.info;
    save_(recorder_.DumpSpan(info.begin_ns, info.end_ns,
                             d.reason + " (in pid " + std::to_string(info.pid) + ")", nullptr,
                             info.pid));
  }
}

void FlightDumps::Close() {
  if (server_) server_->Close("the workload ended");
}

}  // namespace profsh
