// Workloads for the collector's race tests: each mode makes threads meet inside the collector
// (starting and exiting with ranges open, fork and exec while others record, ranges handed
// across threads, steps against the drain thread) and emits events whose exact counts
// check_races.py knows. Built with -fsanitize=thread, like the collector preloaded into it.
//
//   race_workload MODE [ARGS...]
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

long Arg(int argc, char** argv, int i, long fallback) {
  return argc > i ? std::atol(argv[i]) : fallback;
}

void Range(const char* name) {
  nvtxRangePushA(name);
  nvtxRangePop();
}

nvtxEventAttributes_t Named(const char* name) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  return a;
}

// A thread that records "busy" ranges, marks and start/end ranges, and creates domains and
// categories (the registry's lock and metadata queue), until told to stop. Reports how many
// "busy" ranges it recorded.
class Busy {
 public:
  Busy()
      : thread_([this] {
          nvtxDomainHandle_t domain = nvtxDomainCreateA("busy domain");
          nvtxEventAttributes_t in_domain = Named("busy in domain");
          long n = 0;
          while (!stop_.load(std::memory_order_acquire)) {
            nvtxRangePushA("busy");
            nvtxMarkA("busy mark");
            nvtxRangeEnd(nvtxRangeStartA("busy start"));
            // Metadata published often, not without end (the queue holds 64 Ki entries).
            if (n % 4 == 0 && n < 100000)
              nvtxNameCategoryA(static_cast<uint32_t>(n % 64), "busy category");
            nvtxDomainRangePushEx(domain, &in_domain);
            nvtxDomainRangePop(domain);
            nvtxRangePop();
            // Paced, so that the traces stay small enough to check event by event.
            if (++n % 8 == 0) usleep(1000);
          }
          count_ = n;
        }) {}
  long Stop() {
    stop_.store(true, std::memory_order_release);
    thread_.join();
    return count_;
  }

 private:
  std::atomic<bool> stop_{false};
  long count_ = 0;
  std::thread thread_;
};

// Waves of short-lived threads, each recording 50 "work" ranges and exiting with one "left
// open" range still open, while a busy thread records: slots are claimed, handed back at thread
// exit and claimed again by the next wave while the drain thread reads them.
int Threads(int waves) {
  Busy busy;
  for (int w = 0; w < waves; ++w) {
    std::vector<std::thread> wave;
    for (int t = 0; t < 8; ++t) {
      wave.emplace_back([] {
        for (int i = 0; i < 50; ++i) Range("work");
        nvtxRangePushA("left open");
      });
    }
    for (std::thread& t : wave) t.join();
  }
  std::printf("busy %ld\n", busy.Stop());
  return 0;
}

// Forks while a busy thread is inside the collector. Each child records 10 "child" ranges,
// one range in a domain it creates and, from a thread of its own, 10 "child thread" ranges,
// then ends with exit or _exit in turn.
int Fork(int forks) {
  Busy busy;
  int failed = 0;
  for (int f = 0; f < forks; ++f) {
    pid_t pid = fork();
    if (pid < 0) return 3;
    if (pid == 0) {
      for (int i = 0; i < 10; ++i) Range("child");
      nvtxDomainHandle_t domain = nvtxDomainCreateA("child domain");
      nvtxEventAttributes_t a = Named("in child domain");
      nvtxDomainRangePushEx(domain, &a);
      nvtxDomainRangePop(domain);
      std::thread([] {
        for (int i = 0; i < 10; ++i) Range("child thread");
      }).join();
      if (f % 2) _exit(0);
      exit(0);
    }
    Range("parent");
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  std::printf("busy %ld\n", busy.Stop());
  return failed ? 4 : 0;
}

// A thread that is not the main thread execs this program while two others record.
int Exec(const char* self) {
  Busy first, second;
  std::thread exec_thread([self] {
    for (int i = 0; i < 5; ++i) Range("before exec");
    execl(self, self, "exec_child", static_cast<char*>(nullptr));
    std::_Exit(5);  // exec failed
  });
  exec_thread.join();
  return 6;  // not reached
}

int ExecChild() {
  for (int i = 0; i < 10; ++i) Range("after exec");
  return 0;
}

// Ranges started on some threads and ended on others: starters hand their ids over through a
// queue and exit, so most ranges end after the thread that started them is gone.
int StartEnd(int starters, int per_thread) {
  std::mutex m;
  std::condition_variable ready;
  std::deque<nvtxRangeId_t> ids;
  int started = 0;
  std::vector<std::thread> threads;
  for (int s = 0; s < starters; ++s) {
    threads.emplace_back([&] {
      for (int i = 0; i < per_thread; ++i) {
        nvtxRangeId_t id = nvtxRangeStartA("handoff");
        std::lock_guard<std::mutex> lock(m);
        ids.push_back(id);
        ++started;
        ready.notify_one();
      }
    });
  }
  for (int e = 0; e < starters; ++e) {
    threads.emplace_back([&] {
      for (int i = 0; i < per_thread; ++i) {
        std::unique_lock<std::mutex> lock(m);
        ready.wait(lock, [&] { return !ids.empty(); });
        nvtxRangeId_t id = ids.front();
        ids.pop_front();
        lock.unlock();
        nvtxRangeEnd(id);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return started == starters * per_thread ? 0 : 7;
}

// Steps on four threads: the main thread marks each step ("step"); then each worker records
// `per_step` "w_<step>" ranges; the next step starts once all are done. A window therefore holds
// exactly its steps' ranges, whichever thread the drain thread reads when a window ends.
int Steps(int steps, int per_step, int step_ms) {
  constexpr int kWorkers = 4;
  std::mutex m;
  std::condition_variable cv;
  int current = -1, done = 0;
  std::vector<std::thread> workers;
  for (int t = 0; t < kWorkers; ++t) {
    workers.emplace_back([&] {
      char name[32];
      for (int k = 0; k < steps; ++k) {
        {
          std::unique_lock<std::mutex> lock(m);
          cv.wait(lock, [&] { return current >= k; });
        }
        std::snprintf(name, sizeof name, "w_%d", k);
        for (int i = 0; i < per_step; ++i) Range(name);
        std::lock_guard<std::mutex> lock(m);
        ++done;
        cv.notify_all();
      }
    });
  }
  for (int k = 0; k < steps; ++k) {
    Range("step");
    {
      std::unique_lock<std::mutex> lock(m);
      current = k;
      cv.notify_all();
      cv.wait(lock, [&] { return done == (k + 1) * kWorkers; });
    }
    if (step_ms > 0) usleep(static_cast<useconds_t>(step_ms) * 1000);
  }
  for (std::thread& t : workers) t.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: race_workload threads|fork|exec|startend|steps [ARGS]\n");
    return 2;
  }
  // NVTX's header initializes its function table on the first call, and its other calls read
  // that table without synchronization (nvtxImplCore.h): a first call on two threads at once is
  // a race inside NVTX, not in profsh, so the main thread makes it before any thread starts.
  nvtxMarkA("start");
  const std::string mode = argv[1];
  if (mode == "threads") return Threads(static_cast<int>(Arg(argc, argv, 2, 40)));
  if (mode == "fork") return Fork(static_cast<int>(Arg(argc, argv, 2, 10)));
  if (mode == "exec") return Exec(argv[0]);
  if (mode == "exec_child") return ExecChild();
  if (mode == "startend")
    return StartEnd(static_cast<int>(Arg(argc, argv, 2, 4)),
                    static_cast<int>(Arg(argc, argv, 3, 200)));
  if (mode == "steps")
    return Steps(static_cast<int>(Arg(argc, argv, 2, 20)), static_cast<int>(Arg(argc, argv, 3, 50)),
                 static_cast<int>(Arg(argc, argv, 4, 0)));
  std::fprintf(stderr, "race_workload: unknown mode '%s'\n", mode.c_str());
  return 2;
}
