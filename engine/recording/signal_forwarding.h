// What profsh does with the signals that end a shell's job (SIGINT, SIGTERM, SIGHUP) while it
// runs a workload and saves its trace: it passes them on to the workload, as a shell passes them
// to its foreground job, and counts them instead of dying. Without this, `timeout`, `kill`, a
// batch scheduler or a closed terminal ended profsh at once: the workload ran on orphaned and no
// trace was written.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>

namespace profsh {

class SignalForwarding {
 public:
  // Installs the handlers; a guard made while another is alive shares that one's (so that
  // `profsh run` covers the wait, the load and the save, and RunWorkload the wait alone).
  // Signals the process ignored when it started (nohup's SIGHUP) stay ignored.
  SignalForwarding();
  ~SignalForwarding();
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

  // The workload's pid, which signals are passed on to from now on (0: none, once reaped).
  static void SetWorkload(pid_t pid);
  // How many of the signals above arrived since the outermost guard was made.
  static int Received();
  static int LastSignal();
  // Whether that last one was the terminal's Ctrl-C, which the workload got from the terminal
  // as well (and which was therefore not passed on).
  static bool LastFromTerminal();
  // The signals handled here, and SIGCHLD (so that a wait can sleep until one of them comes).
  static sigset_t WaitedSignals();
  // In a forked child before exec: the dispositions and mask the process had before the guard.
  static void RestoreInChild(const sigset_t& mask);
};

// "SIGTERM", "SIGHUP", ... for messages.
std::string SignalName(int signal);

}  // namespace profsh
