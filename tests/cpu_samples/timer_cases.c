// Cases the collector's timer fallback must survive, one per mode (check_timer_fallback.py):
//   blocked   burns with every signal blocked, then unblocked: the blocked stretch is not sampled
//   exec      burns, fails an exec, burns, then execs itself ("exec2") and burns again
//   handler   replaces every real-time signal's handler, then burns: prints the calls it got
//   threads   3000 short threads (half end in pthread_exit), then one that burns: prints the
//             POSIX timers left in the process
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "burn.h"

static volatile double sink;
#define SPIN \
  for (int k_ = 0; k_ < 2000; ++k_) sink += k_ * 0.5

__attribute__((noinline)) static void blocked_burn(void) {
  PROFSH_BURN(400, SPIN);
}
__attribute__((noinline)) static void unblocked_burn(void) {
  PROFSH_BURN(300, SPIN);
}
__attribute__((noinline)) static void first_burn(void) {
  PROFSH_BURN(200, SPIN);
}
__attribute__((noinline)) static void after_failed_exec(void) {
  PROFSH_BURN(200, SPIN);
}
__attribute__((noinline)) static void second_burn(void) {
  PROFSH_BURN(200, SPIN);
}
__attribute__((noinline)) static void handler_burn(void) {
  PROFSH_BURN(300, SPIN);
}
__attribute__((noinline)) static void late_burn(void) {
  PROFSH_BURN(200, SPIN);
}

static volatile sig_atomic_t handler_calls;
static void CountingHandler(int sig, siginfo_t* info, void* context) {
  (void)sig, (void)info, (void)context;
  ++handler_calls;
}

static void* ShortThread(void* arg) {
  sink += 1;
  if ((long)arg % 2) pthread_exit(NULL);
  return NULL;
}

static void* LateThread(void* arg) {
  (void)arg;
  late_burn();
  return NULL;
}

static int CountTimers(void) {
  FILE* f = fopen("/proc/self/timers", "r");
  if (f == NULL) return -1;
  char line[256];
  int n = 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "ID:", 3) == 0) ++n;
  fclose(f);
  return n;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "blocked") == 0) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    blocked_burn();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    unblocked_burn();
  } else if (strcmp(mode, "exec") == 0) {
    first_burn();
    char* missing[] = {"/nonexistent/profsh-test", NULL};
    execv(missing[0], missing);
    after_failed_exec();
    char* again[] = {argv[0], "exec2", NULL};
    execv("/proc/self/exe", again);
    perror("exec");
    return 1;
  } else if (strcmp(mode, "exec2") == 0) {
    second_burn();
  } else if (strcmp(mode, "handler") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = CountingHandler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) sigaction(s, &sa, NULL);
    handler_burn();
    printf("handler calls: %d\n", (int)handler_calls);
  } else if (strcmp(mode, "threads") == 0) {
    for (long i = 0; i < 3000; ++i) {
      pthread_t t;
      if (pthread_create(&t, NULL, ShortThread, (void*)i) != 0) return 1;
      pthread_join(t, NULL);
    }
    pthread_t late;
    if (pthread_create(&late, NULL, LateThread, NULL) != 0) return 1;
    pthread_join(late, NULL);
    printf("timers: %d\n", CountTimers());
  } else {
    fprintf(stderr, "usage: timer_cases blocked|exec|handler|threads\n");
    return 2;
  }
  return 0;
}
