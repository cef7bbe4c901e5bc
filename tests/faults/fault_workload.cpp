// Workloads that do what real programs do to the processes they run in: close every file
// descriptor, daemonise, change user, vfork, posix_spawn, clone without fork, exec a static
// binary, start thousands of threads and processes, crash, and allocate millions of blocks.
// Each mode records NVTX ranges whose exact count the driver (check_faults.py) knows, and
// prints or writes what the driver compares with a run without profsh.
//
//   fault_workload MODE [ARGS...]
#include <nvtx3/nvToolsExt.h>

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

long Arg(int argc, char** argv, int i, long fallback) {
  return argc > i ? std::atol(argv[i]) : fallback;
}

void Ranges(const char* name, long n) {
  for (long i = 0; i < n; ++i) {
    nvtxRangePushA(name);
    nvtxRangePop();
  }
}

void SleepMs(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Writes `text` to `path` (created or truncated), all or nothing as far as the driver can tell.
bool WriteFile(const char* path, const std::string& text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  return close(fd) == 0 && ok;
}

int Wait(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// N ranges, then a line with the count.
int Plain(long n) {
  Ranges("work", n);
  std::printf("ranges %ld\n", n);
  return 0;
}

// A range every millisecond for `ms` milliseconds; then DONE_FILE gets the count (what the
// driver checks when profsh is no longer there to tell).
int Steady(long ms, const char* done_file) {
  long n = 0;
  for (long t = 0; t < ms; ++t) {
    nvtxRangePushA("steady");
    SleepMs(1);
    nvtxRangePop();
    ++n;
  }
  std::printf("steady %ld\n", n);
  std::fflush(stdout);
  return WriteFile(done_file, "steady " + std::to_string(n) + "\n") ? 0 : 1;
}

// Closes every descriptor, as daemons and some launchers do, then opens FILES new ones (which
// take the lowest numbers, those the collector's stream had) and writes to them while ranges
// are recorded and drained. Each file must hold exactly what was written to it.
int CloseFds(const char* folder, int files) {
  Ranges("before close", 100);
  SleepMs(50);  // a drain round or two: the collector's stream is open and in use
  struct rlimit limit;
  long highest = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 65536
                     ? static_cast<long>(limit.rlim_cur)
                     : 65536;
  for (long fd = 0; fd < highest; ++fd) close(static_cast<int>(fd));
  std::vector<int> fds;
  for (int i = 0; i < files; ++i) {
    std::string path = std::string(folder) + "/file" + std::to_string(i);
    fds.push_back(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
  }
  for (int round = 0; round < 10; ++round) {
    Ranges("after close", 100);
    for (int i = 0; i < files; ++i) {
      std::string line = "file " + std::to_string(i) + " line " + std::to_string(round) + "\n";
      if (fds[i] < 0 || write(fds[i], line.data(), line.size()) != (ssize_t)line.size()) return 3;
    }
    SleepMs(10);
  }
  SleepMs(50);
  for (int fd : fds) close(fd);
  // A child too: the fork handlers must leave the workload's descriptors alone.
  pid_t child = fork();
  if (child == 0) {
    Ranges("child after close", 10);
    std::exit(0);
  }
  return Wait(child);
}

// daemon(3): the parent returns at once (glibc ends it with its internal _exit), the daemon
// goes on without profsh waiting for it and reports through DONE_FILE.
int Daemonise(const char* done_file) {
  Ranges("before daemon", 50);
  if (daemon(1, 0) != 0) return 1;
  Ranges("in daemon", 50);
  SleepMs(300);  // profsh has loaded the session and removed its folder by now
  Ranges("in daemon later", 50);
  pid_t child = fork();  // the session folder is gone: the child cannot have a stream
  if (child == 0) {
    Ranges("daemon child", 5);
    _exit(0);
  }
  Wait(child);
  return WriteFile(done_file, "daemon done\n") ? 0 : 1;
}

// Runs as root and becomes `nobody`: the open stream goes on; a child and an exec'd image
// cannot open their own streams in the root-owned session folder.
int BecomeNobody(const char* self) {
  Ranges("as root", 100);
  const passwd* nobody = getpwnam("nobody");
  if (nobody == nullptr || setgid(nobody->pw_gid) != 0 || setuid(nobody->pw_uid) != 0) {
    std::printf("setuid failed: %s\n", std::strerror(errno));
    return 1;
  }
  std::printf("now uid %d\n", static_cast<int>(getuid()));
  std::fflush(stdout);
  Ranges("as nobody", 100);
  pid_t child = fork();
  if (child == 0) {
    Ranges("child as nobody", 10);
    std::exit(0);
  }
  int status = Wait(child);
  SleepMs(50);
  std::fflush(stdout);
  execl(self, self, "plain", "7", static_cast<char*>(nullptr));
  return 100 + status;
}

// vfork + exec, and posix_spawn: each child is this program in plain mode.
int Spawns(const char* self) {
  Ranges("spawner", 10);
  char plain[] = "plain", n1[] = "11", n2[] = "13";
  char* vfork_argv[] = {const_cast<char*>(self), plain, n1, nullptr};
  pid_t v = vfork();
  if (v == 0) {
    execve(self, vfork_argv, environ);
    _exit(127);
  }
  int a = Wait(v);
  char* spawn_argv[] = {const_cast<char*>(self), plain, n2, nullptr};
  pid_t s;
  if (posix_spawn(&s, self, nullptr, nullptr, spawn_argv, environ) != 0) return 2;
  int b = Wait(s);
  Ranges("spawner", 10);
  return a + b;
}

// Children made with the clone system call directly: no fork handlers run in them.
int CloneChild(void* arg) {
  const char* self = static_cast<const char*>(arg);
  Ranges("clone child", 20);
  if (self != nullptr) {
    execl(self, self, "plain", "17", static_cast<char*>(nullptr));
    return 127;
  }
  std::fflush(stdout);
  _exit(0);
}

int Clones(const char* self) {
  Ranges("cloner", 10);
  int status = 0;
  for (const char* exec_self : {self, static_cast<const char*>(nullptr)}) {
    const size_t stack_size = 256 * 1024;
    std::vector<char> stack(stack_size);
    pid_t c = clone(CloneChild, stack.data() + stack_size, SIGCHLD, const_cast<char*>(exec_self));
    if (c < 0) return 2;
    status += Wait(c);
  }
  Ranges("cloner", 10);
  return status;
}

int ExecStatic(const char* static_binary) {
  Ranges("before static exec", 30);
  std::fflush(stdout);
  execl(static_binary, static_binary, static_cast<char*>(nullptr));
  return 127;
}

// N short threads, BATCH at a time, each with two ranges.
int Threads(long n, long batch) {
  long started = 0;
  while (started < n) {
    std::vector<std::thread> wave;
    for (long i = 0; i < batch && started < n; ++i, ++started)
      wave.emplace_back([] { Ranges("thread", 2); });
    for (auto& t : wave) t.join();
  }
  std::printf("threads %ld\n", started);
  return 0;
}

// N child processes, BATCH at a time, each with three ranges; every other one ends with _exit.
int Children(long n, long batch) {
  long started = 0, failed = 0;
  while (started < n) {
    std::vector<pid_t> wave;
    for (long i = 0; i < batch && started < n; ++i, ++started) {
      pid_t c = fork();
      if (c == 0) {
        Ranges("child", 3);
        if (started % 2) _exit(0);
        std::exit(0);
      }
      wave.push_back(c);
    }
    for (pid_t c : wave) failed += Wait(c) != 0;
  }
  std::printf("children %ld failed %ld\n", started, failed);
  return failed ? 1 : 0;
}

// Signal handlers of the program's own: a process-directed signal is taken by one of the
// program's threads (never the collector's), and a SIGSEGV handler runs and decides the exit.
std::atomic<long> g_usr1{0};
std::atomic<long> g_usr1_foreign{0};
thread_local bool t_program_thread = false;

void OnUsr1(int) {
  g_usr1.fetch_add(1);
  if (!t_program_thread) g_usr1_foreign.fetch_add(1);
}

void OnSegv(int, siginfo_t* info, void*) {
  char text[64];
  int n = std::snprintf(text, sizeof text, "caught SIGSEGV at %p\n", info->si_addr);
  ssize_t ignored = write(1, text, static_cast<size_t>(n));
  (void)ignored;
  _exit(3);
}

// What is installed for each signal when main starts (profsh's collector must have added
// nothing): one line per signal that is not SIG_DFL.
void PrintDispositions() {
  for (int s = 1; s < 32; ++s) {
    struct sigaction old;
    if (sigaction(s, nullptr, &old) == 0 && old.sa_handler != SIG_DFL)
      std::printf("signal %d: %s\n", s, old.sa_handler == SIG_IGN ? "ignored" : "handled");
  }
}

int Crash(const std::string& how) {
  t_program_thread = true;
  PrintDispositions();
  struct sigaction usr1 {};
  usr1.sa_handler = OnUsr1;
  sigemptyset(&usr1.sa_mask);
  sigaction(SIGUSR1, &usr1, nullptr);
  std::atomic<bool> stop{false};
  std::thread worker([&stop] {
    t_program_thread = true;
    while (!stop.load()) SleepMs(1);
  });
  for (int i = 0; i < 200; ++i) {
    kill(getpid(), SIGUSR1);  // process-directed: any thread that does not block it
    if (i % 20 == 0) SleepMs(2);
  }
  while (g_usr1.load() < 200) SleepMs(1);
  stop.store(true);
  worker.join();
  std::printf("SIGUSR1 handled %ld times, %ld on threads not the program's\n", g_usr1.load(),
              g_usr1_foreign.load());
  Ranges("before crash", 100);
  std::fflush(stdout);
  SleepMs(200);  // ten drain intervals: the ranges are on disk before the crash
  if (how == "handled_segv") {
    struct sigaction segv {};
    segv.sa_sigaction = OnSegv;
    segv.sa_flags = SA_SIGINFO;
    sigemptyset(&segv.sa_mask);
    sigaction(SIGSEGV, &segv, nullptr);
  }
  if (how == "segv" || how == "handled_segv") {
    volatile int* nowhere = nullptr;
    return *nowhere;
  }
  if (how == "abort") std::abort();
  if (how == "terminate") throw std::runtime_error("the workload gives up");
  return 2;
}

// THREADS threads allocate and free N blocks each (sizes 16..2064), in ranges of 1000.
int Allocate(long threads, long n) {
  std::vector<std::thread> pool;
  for (long t = 0; t < threads; ++t) {
    pool.emplace_back([n, t] {
      void* blocks[1000];
      for (long done = 0; done < n;) {
        nvtxRangePushA("allocate");
        long batch = n - done < 1000 ? n - done : 1000;
        for (long i = 0; i < batch; ++i) {
          blocks[i] = std::malloc(16 + static_cast<size_t>((i * 7 + t) % 129) * 16);
          asm volatile("" : : "r"(blocks[i]) : "memory");
        }
        for (long i = 0; i < batch; ++i) std::free(blocks[i]);
        nvtxRangePop();
        done += batch;
      }
    });
  }
  for (auto& t : pool) t.join();
  std::printf("allocated %ld blocks\n", threads * n);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  const char* a2 = argc > 2 ? argv[2] : "";
  if (mode == "plain") return Plain(Arg(argc, argv, 2, 10));
  if (mode == "steady") return Steady(Arg(argc, argv, 2, 500), argc > 3 ? argv[3] : "done");
  if (mode == "close_fds") return CloseFds(a2, static_cast<int>(Arg(argc, argv, 3, 5)));
  if (mode == "daemon") return Daemonise(a2);
  if (mode == "setuid") return BecomeNobody(argv[0]);
  if (mode == "spawn") return Spawns(argv[0]);
  if (mode == "clone") return Clones(argv[0]);
  if (mode == "exec_static") return ExecStatic(a2);
  if (mode == "threads") return Threads(Arg(argc, argv, 2, 10000), Arg(argc, argv, 3, 8));
  if (mode == "children") return Children(Arg(argc, argv, 2, 1000), Arg(argc, argv, 3, 4));
  if (mode == "crash") return Crash(a2);
  if (mode == "allocate") return Allocate(Arg(argc, argv, 2, 8), Arg(argc, argv, 3, 1250000));
  std::fprintf(stderr,
               "usage: fault_workload plain|steady|close_fds|daemon|setuid|spawn|clone|"
               "exec_static|threads|children|crash|allocate [ARGS...]\n");
  return 2;
}
