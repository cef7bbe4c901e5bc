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

 private:
  struct Client {
    int fd = -1;
    std::string input;
    uint64_t request = 0;
    int64_t pid = 0;
    std::string output;
  };
  void Reply(Client& c, const std::string& line);
  int listen_fd_ = -1;
  std::string path_;
  std::vector<Client> clients_;
};

// Client side: finds PID's session (from its environment), asks for `steps` steps, waits up to
// `timeout_s` seconds (0: no limit), and returns the path of the saved trace.
Result<std::string> RequestOnDemandTrace(int64_t pid, int64_t steps, const std::string& output,
                                         double timeout_s);

}  // namespace profsh
