// Workloads for the watchdog's and the on-demand dumps' tests (check_watchdog.py): NVTX steps
// (a "step" range each), a communication thread that runs a fake collective per step, and a
// hang in one of them.
//
//   hang_workload hang STEPS STEP_MS HANG_AT HANG_MS [SPIN]
//     step HANG_AT's collective ("nccl:all_reduce", its sequence number as the NVTX payload)
//     blocks for HANG_MS (SPIN 1: spinning in BlockedInCollective) while the main thread waits
//     for it in "wait_collective"; prints "hang_begin NS" (CLOCK_REALTIME) as it begins
//   hang_workload two STEPS STEP_MS [SLOW_AT]
//     forks: the two processes step side by side; prints "pids PARENT CHILD"; the child's step
//     SLOW_AT spends 30 ms in "slow_work"
#include <nvtx3/nvToolsExt.h>

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace {

int64_t RealtimeNs() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000LL + now.tv_nsec;
}

void Spin(int us) {
  timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 < us);
}

// A collective that never completes, spinning as NCCL's progress threads do (so that CPU samples
// see it); kept a function of its own for the stacks.
__attribute__((noinline)) void BlockedInCollective(int ms) {
  Spin(ms * 1000);
  asm volatile("" ::: "memory");
}

// The communication thread: runs one collective per request, as a process group's thread does.
class CommThread {
 public:
  CommThread() : thread_([this] { Run(); }) {}
  ~CommThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  // Runs collective `seq` on the thread, lasting `ms`, and waits for it.
  void AllReduce(int64_t seq, int ms, bool spin) {
    std::unique_lock<std::mutex> lock(mutex_);
    seq_ = seq;
    ms_ = ms;
    spin_ = spin;
    asked_ = true;
    wake_.notify_all();
    done_cv_.wait(lock, [this] { return !asked_; });
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [this] { return asked_ || stop_; });
      if (stop_) return;
      nvtxEventAttributes_t a{};
      a.version = NVTX_VERSION;
      a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
      a.messageType = NVTX_MESSAGE_TYPE_ASCII;
      a.message.ascii = "nccl:all_reduce";
      a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
      a.payload.llValue = seq_;
      nvtxRangePushEx(&a);
      lock.unlock();
      if (spin_) {
        BlockedInCollective(ms_);
      } else {
        usleep(static_cast<useconds_t>(ms_) * 1000);
      }
      lock.lock();
      nvtxRangePop();
      asked_ = false;
      done_cv_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_, done_cv_;
  bool asked_ = false, stop_ = false, spin_ = false;
  int64_t seq_ = 0;
  int ms_ = 0;
  std::thread thread_;
};

int Hang(int steps, int step_ms, int hang_at, int hang_ms, bool spin) {
  CommThread comm;
  for (int k = 0; k < steps; ++k) {
    nvtxRangePushA("step");
    nvtxRangePushA("forward");
    Spin(1000);
    nvtxRangePop();
    nvtxRangePushA("wait_collective");
    if (k == hang_at) {
      std::printf("hang_begin %lld\n", static_cast<long long>(RealtimeNs()));
      std::fflush(stdout);
    }
    comm.AllReduce(k, k == hang_at ? hang_ms : 1, spin && k == hang_at);
    nvtxRangePop();
    nvtxRangePop();
    usleep(static_cast<useconds_t>(step_ms) * 1000);
  }
  std::printf("exit %lld\n", static_cast<long long>(RealtimeNs()));
  return 0;
}

int Two(int steps, int step_ms, int slow_at) {
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child > 0) {
    std::printf("pids %d %d\n", static_cast<int>(parent), static_cast<int>(child));
    std::fflush(stdout);
  }
  for (int k = 0; k < steps; ++k) {
    nvtxRangePushA("step");
    nvtxRangePushA(child == 0 ? "child_work" : "parent_work");
    Spin(1000);
    nvtxRangePop();
    if (child == 0 && k == slow_at) {
      nvtxRangePushA("slow_work");
      Spin(30000);
      nvtxRangePop();
    }
    nvtxRangePop();
    usleep(static_cast<useconds_t>(step_ms) * 1000);
  }
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int Arg(int argc, char** argv, int i, int fallback) {
  return argc > i ? std::atoi(argv[i]) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "hang")
    return Hang(Arg(argc, argv, 2, 100), Arg(argc, argv, 3, 5), Arg(argc, argv, 4, 40),
                Arg(argc, argv, 5, 3000), Arg(argc, argv, 6, 0) != 0);
  if (mode == "two")
    return Two(Arg(argc, argv, 2, 400), Arg(argc, argv, 3, 10), Arg(argc, argv, 4, -1));
  std::fprintf(stderr,
               "usage: hang_workload hang STEPS STEP_MS HANG_AT HANG_MS [SPIN] | two STEPS STEP_MS "
               "[SLOW_AT]\n");
  return 2;
}
