#include "engine/recording/dump_signal.h"

#include <signal.h>

namespace profsh {

namespace {

volatile sig_atomic_t g_requests = 0;
struct sigaction g_previous;

void OnDumpSignal(int) {
  g_requests = g_requests + 1;
}

}  // namespace

DumpSignal::DumpSignal() {
  g_requests = 0;
  struct sigaction action {};
  action.sa_handler = OnDumpSignal;
  sigemptyset(&action.sa_mask);
  // No SA_RESTART: the wait's sleep returns and the poll that follows dumps at once.
  sigaction(SIGUSR2, &action, &g_previous);
}

DumpSignal::~DumpSignal() {
  sigaction(SIGUSR2, &g_previous, nullptr);
}

bool DumpSignal::Take() {
  if (g_requests == 0) return false;
  g_requests = 0;
  return true;
}

}  // namespace profsh
