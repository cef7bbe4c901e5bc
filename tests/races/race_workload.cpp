// Workloads for the collector's race tests: each mode makes threads meet inside the collector
// (starting and exiting with ranges open, fork and exec while others record, ranges handed
// across threads, steps against the drain thread) and emits events whose exact counts
// check_races.py knows. Built with -fsanitize=thread, like the collector preloaded into it.
//
//   race_workload MODE [ARGS...]
#include <nvtx3/nvToolsExt.h>
#include <sys/mman.h>
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

#include "scripts/samples/itt_static_part.h"

// libprofsh_memory.so's entry points, built into this program with their names prefixed
// (memory_hooks.cpp, PROFSH_MEMORY_HOOKS_UNDER_TEST): TSan's malloc stays the program's, and the
// workload calls the hooks as an interposed malloc would be called.
extern "C" {
void* profsh_hook_malloc(size_t);
void profsh_hook_free(void*);
void* profsh_hook_calloc(size_t, size_t);
void* profsh_hook_realloc(void*, size_t);
int profsh_hook_posix_memalign(void**, size_t, size_t);
void* profsh_hook_aligned_alloc(size_t, size_t);
void* profsh_hook_memalign(size_t, size_t);
void* profsh_hook_mmap(void*, size_t, int, int, int, off_t);
int profsh_hook_munmap(void*, size_t);
}

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

// One thread's allocations through the hooks, inside an "alloc" range: `rounds` rounds of
// malloc, calloc grown by realloc, posix_memalign, aligned_alloc and memalign, all freed (12
// memory events a round: realloc reports a free and an allocation), and every 20th round a 1 MiB
// anonymous mmap and its munmap (2 more: the size table's insert and removal).
constexpr int kEventsPerRound = 12;

void Allocate(int rounds) {
  nvtxRangePushA("alloc");
  for (int i = 0; i < rounds; ++i) {
    void* a = profsh_hook_malloc(16 + static_cast<size_t>(i));
    void* b = profsh_hook_calloc(4, 8 + static_cast<size_t>(i));
    b = profsh_hook_realloc(b, 4096 + static_cast<size_t>(i));
    void* c = nullptr;
    if (profsh_hook_posix_memalign(&c, 64, 100) != 0) std::abort();
    void* d = profsh_hook_aligned_alloc(64, 128);
    void* e = profsh_hook_memalign(32, 64);
    if (!a || !b || !d || !e) std::abort();
    static_cast<char*>(a)[0] = static_cast<char*>(b)[4095] = 1;
    for (void* p : {a, b, c, d, e}) profsh_hook_free(p);
    if (i % 20 == 0) {
      // Never touched: TSan does not know where the kernel put it.
      void* m = profsh_hook_mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED || profsh_hook_munmap(m, 1 << 20) != 0) std::abort();
    }
  }
  nvtxRangePop();
}

long AllocationEvents(int rounds) {
  return static_cast<long>(rounds) * kEventsPerRound + 2L * ((rounds + 19) / 20);
}

// The memory hooks from many threads at once: waves of 8 threads that allocate and exit, beside
// a busy thread (inside the collector when each child is forked), and a child forked in each
// wave that allocates on its main thread and on a thread of its own while the wave runs. Prints the
// events each process made.
int Memory(int waves, int rounds) {
  Busy busy;
  int failed = 0;
  for (int w = 0; w < waves; ++w) {
    // Forked before the wave starts: a child forked while other threads are inside TSan's own
    // malloc can deadlock in it (clang 14's runtime does not hold its allocator across fork).
    pid_t pid = fork();
    if (pid < 0) return 3;
    if (pid == 0) {
      Allocate(rounds);
      std::thread([rounds] { Allocate(rounds); }).join();
      _exit(0);
    }
    std::vector<std::thread> wave;
    for (int t = 0; t < 8; ++t) wave.emplace_back([rounds] { Allocate(rounds); });
    for (std::thread& t : wave) t.join();
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  busy.Stop();
  std::printf("parent %ld child %ld\n", waves * 8 * AllocationEvents(rounds),
              2 * AllocationEvents(rounds));
  return failed ? 4 : 0;
}

using Itt = itt_client::StaticPart<1>;
const itt_client::Id kNoId{0, 0, 0};

// Without a collector (the variable unset, or loading failed), functions are null: skipped.
#define ITT_CALL(fn, ...)              \
  do {                                 \
    if (Itt::fn) Itt::fn(__VA_ARGS__); \
  } while (0)

// ITT from many threads at once: waves of 8 threads, thread t naming itself, creating the domain
// "itt domain <t % 4>" (two threads of a wave create each at the same time) and, per task, its
// string handle "d<t % 4> task <i % 8>" (created again by every thread), and counting every task
// on a counter made before the collector was loaded (adopted on first use, by whichever thread
// gets there first). A child forked in each wave records 16 "child task" tasks in a domain it
// creates, on its main thread and on a thread of its own.
int IttWorkload(int waves, int tasks) {
  itt_client::Domain* early = Itt::domain_create("itt early");
  itt_client::Counter counted = Itt::counter_create("itt tasks", "itt early");
  // The first call loads the collector (the static part's own function table is filled without
  // synchronization, as ittnotify's is: its first call must not race).
  ITT_CALL(task_begin, early, kNoId, kNoId, Itt::string_handle_create("itt load"));
  ITT_CALL(task_end, early);
  auto child_tasks = [] {
    itt_client::Domain* d = Itt::domain_create("itt child domain");
    for (int i = 0; i < 8; ++i) {
      ITT_CALL(task_begin, d, kNoId, kNoId, Itt::string_handle_create("child task"));
      ITT_CALL(task_end, d);
    }
  };
  Busy busy;
  int failed = 0;
  for (int w = 0; w < waves; ++w) {
    // Forked before the wave starts, as in Memory().
    pid_t pid = fork();
    if (pid < 0) return 3;
    if (pid == 0) {
      child_tasks();
      std::thread(child_tasks).join();
      _exit(0);
    }
    std::vector<std::thread> wave;
    for (int t = 0; t < 8; ++t) {
      wave.emplace_back([t, tasks, counted] {
        ITT_CALL(thread_set_name, "itt worker");
        char name[32];
        std::snprintf(name, sizeof name, "itt domain %d", t % 4);
        itt_client::Domain* d = Itt::domain_create(name);
        for (int i = 0; i < tasks; ++i) {
          std::snprintf(name, sizeof name, "d%d task %d", t % 4, i % 8);
          ITT_CALL(task_begin, d, kNoId, kNoId, Itt::string_handle_create(name));
          ITT_CALL(counter_inc, counted);
          ITT_CALL(task_end, d);
        }
      });
    }
    for (std::thread& t : wave) t.join();
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  busy.Stop();
  return failed ? 4 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: race_workload threads|fork|exec|startend|steps|memory|itt [ARGS]\n");
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
  if (mode == "memory")
    return Memory(static_cast<int>(Arg(argc, argv, 2, 10)),
                  static_cast<int>(Arg(argc, argv, 3, 200)));
  if (mode == "itt") {
    Itt::Setup();
    return IttWorkload(static_cast<int>(Arg(argc, argv, 2, 10)),
                       static_cast<int>(Arg(argc, argv, 3, 96)));
  }
  if (mode == "steps")
    return Steps(static_cast<int>(Arg(argc, argv, 2, 20)), static_cast<int>(Arg(argc, argv, 3, 50)),
                 static_cast<int>(Arg(argc, argv, 4, 0)));
  std::fprintf(stderr, "race_workload: unknown mode '%s'\n", mode.c_str());
  return 2;
}
