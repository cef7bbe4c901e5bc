// On-demand tracing: `profsh run --on-demand` starts a workload with the collector idle and
// listens on a Unix socket in the session folder (only the same user may connect); `profsh trace
// --pid PID --steps N` (or profsh.trace{} in Lua) asks it to record the next N steps of that
// process, like Kineto's on-demand tracing, and gets the saved trace's path back.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/recording/launcher.h"
#include "engine/session/live_session.h"

namespace profsh {

inline constexpr char kControlSocket[] = "control.sock";

class OnDemandServer {
 public:
  static Result<std::unique_ptr<OnDemandServer>> Listen(const std::string& session);
  ~OnDemandServer();
  // Accepts clients and reads their requests (never blocks); new requests go to the workload.
  void Poll(ControlChannel& control);
  // A window completed: if it answers a request, save it where asked and tell the client.
  // Returns true when it did.
  bool Answer(const WindowTrace& window);
  // The workload ended: every client still waiting is told so.
  void Close(const std::string& why);

  // Flight recorder dumps asked for ("dump PID": profsh trace --pid PID --dump) since the last
  // call; each is answered with Dumped() once the dump is saved (or failed).
  struct DumpRequest {
    uint64_t client = 0;
    int64_t pid = 0;
  };
  std::vector<DumpRequest> TakeDumpRequests();
  // Answers every "trace" request with `why` instead (a flight recorder's run: a request would
  // replace the schedule that records every step).
  void RefuseTraces(std::string why) { refuse_traces_ = std::move(why); }
  void Dumped(uint64_t client, const Result<std::vector<std::string>>& paths);

 private:
  struct Client {
    int fd = -1;
    std::string input;
    uint64_t request = 0;
    int64_t pid = 0;
    std::string output;
    uint64_t id = 0;
    bool dump = false;  // a dump request, waiting for Dumped()
    bool taken = false;
  };
  uint64_t next_client_ = 1;
  std::string refuse_traces_;
  void Reply(Client& c, const std::string& line);
  int listen_fd_ = -1;
  std::string path_;
  std::vector<Client> clients_;
};

// Client side: finds PID's session (from its environment), asks for `steps` steps, waits up to
// `timeout_s` seconds (0: no limit), and returns the path of the saved trace.
Result<std::string> RequestOnDemandTrace(int64_t pid, int64_t steps, const std::string& output,
                                         double timeout_s);
// Client side: asks the profsh run of PID (with --flight-recorder) to dump its rings now; returns
// the paths of the saved dumps, one per process of the run.
Result<std::vector<std::string>> RequestFlightDump(int64_t pid, double timeout_s);

}  // namespace profsh
