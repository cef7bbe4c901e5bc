#include "engine/recording/signal_forwarding.h"

#include <string.h>
#include <unistd.h>

namespace profsh {

namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kCount = sizeof kForwarded / sizeof kForwarded[0];

volatile sig_atomic_t g_workload = 0;
volatile sig_atomic_t g_received = 0;
volatile sig_atomic_t g_last = 0;
volatile sig_atomic_t g_last_from_terminal = 0;
int g_depth = 0;  // guards alive; workloads are run from one thread at a time
struct sigaction g_previous[kCount];
struct sigaction g_previous_child;
bool g_installed[kCount];

void OnSignal(int signal, siginfo_t* info, void*) {
  g_received = g_received + 1;
  g_last = signal;
  // Ctrl-C from the terminal (the kernel's tty driver sends it: SI_KERNEL, no sender pid)
  // already went to the whole foreground group, the workload included; passing it on again
  // would interrupt the workload twice.
  g_last_from_terminal = signal == SIGINT && info != nullptr && info->si_code == SI_KERNEL;
  if (g_last_from_terminal) return;
  const pid_t workload = g_workload;
  if (workload > 0) kill(workload, signal);
}

// Only there so that a wait sleeping in ppoll wakes when the workload ends.
void OnChild(int) {}

}  // namespace

SignalForwarding::SignalForwarding() {
  if (g_depth++ > 0) return;
  g_received = 0;
  g_last = 0;
  g_last_from_terminal = 0;
  g_workload = 0;
  struct sigaction action {};
  action.sa_sigaction = OnSignal;
  action.sa_flags = SA_SIGINFO;  // no SA_RESTART: a blocking call returns to look at the count
  sigemptyset(&action.sa_mask);
  for (int k = 0; k < kCount; ++k) {
    sigaction(kForwarded[k], nullptr, &g_previous[k]);
    g_installed[k] = g_previous[k].sa_handler != SIG_IGN;
    if (g_installed[k]) sigaction(kForwarded[k], &action, nullptr);
  }
  struct sigaction child {};
  child.sa_handler = OnChild;
  child.sa_flags = SA_NOCLDSTOP;
  sigemptyset(&child.sa_mask);
  sigaction(SIGCHLD, &child, &g_previous_child);
}

SignalForwarding::~SignalForwarding() {
  if (--g_depth > 0) return;
  g_workload = 0;
  for (int k = 0; k < kCount; ++k) {
    if (g_installed[k]) sigaction(kForwarded[k], &g_previous[k], nullptr);
  }
  sigaction(SIGCHLD, &g_previous_child, nullptr);
}

void SignalForwarding::SetWorkload(pid_t pid) {
  g_workload = pid;
}

int SignalForwarding::Received() {
  return g_received;
}

int SignalForwarding::LastSignal() {
  return g_last;
}

bool SignalForwarding::LastFromTerminal() {
  return g_last_from_terminal != 0;
}

sigset_t SignalForwarding::WaitedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kForwarded) sigaddset(&set, s);
  sigaddset(&set, SIGCHLD);
  return set;
}

void SignalForwarding::RestoreInChild(const sigset_t& mask) {
  for (int k = 0; k < kCount; ++k) {
    if (g_installed[k]) sigaction(kForwarded[k], &g_previous[k], nullptr);
  }
  sigaction(SIGCHLD, &g_previous_child, nullptr);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
}

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

}  // namespace profsh
