// The runtime's life in a process: set up when the library is loaded (LD_PRELOAD, or dlopen by
// NVTX / ITT), a stream per process image, the drain thread, and the process events that must
// not lose data: fork (the child gets its own stream), exec and _exit (flush first), exit.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <new>

#include "engine/collector/runtime/cupti_source.h"
#include "engine/collector/runtime/drain.h"
#include "engine/collector/runtime/memory_scope.h"
#include "engine/collector/runtime/process.h"
#include "engine/collector/runtime/raw_map.h"
#include "engine/collector/runtime/registry.h"
#include "engine/collector/runtime/runtime.h"
#include "engine/collector/runtime/steps.h"
#include "engine/collector/runtime/timer_sampler.h"

extern char** environ;

namespace profsh::runtime {

void InitSlotKey();

namespace {

constexpr uint32_t kSlotCount = 1024;
constexpr uint32_t kStringCapacity = 1u << 20;
constexpr size_t kStringArenaBytes = size_t{128} << 20;

StringTable g_strings;
pid_t g_pid = 0;            // the process the runtime's state belongs to
uint32_t g_exec_index = 0;  // how many execs of this pid came before this image
std::atomic<bool> g_stop_drain{false};
// An image's end (exec, _exit) asks the drain thread for a round with CUPTI's forced flush:
// rounds asked for, and the last one the drain thread ran.
std::atomic<uint32_t> g_gpu_flush_asked{0}, g_gpu_flush_done{0};

// Our own variables, saved at start so that exec can give them back to children whose
// environment was replaced (execve with a new envp).
constexpr int kSavedVars = 8;
char* g_saved_env[kSavedVars] = {};
char g_self_path[4096] = {};

const char* kLauncherVars[] = {"RANK",
                               "LOCAL_RANK",
                               "WORLD_SIZE",
                               "LOCAL_WORLD_SIZE",
                               "GROUP_RANK",
                               "ROLE_RANK",
                               "NODE_RANK",
                               "MASTER_ADDR",
                               "MASTER_PORT",
                               "TORCHELASTIC_RUN_ID",
                               "OMPI_COMM_WORLD_RANK",
                               "OMPI_COMM_WORLD_SIZE",
                               "PMI_RANK",
                               "PMI_SIZE",
                               "SLURM_PROCID",
                               "SLURM_NTASKS",
                               "CUDA_VISIBLE_DEVICES"};

bool HasCpuFlag(const char* flag) {
  int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  static char buf[16384];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* flags = strstr(buf, "\nflags");
  if (!flags) return false;
  const char* end = strchr(flags + 1, '\n');
  size_t len = strlen(flag);
  for (const char* p = strstr(flags, flag); p && (!end || p < end); p = strstr(p + 1, flag)) {
    if (p[-1] == ' ' && (p[len] == ' ' || p[len] == '\n')) return true;
  }
  return false;
}

uint64_t EnvNumber(const char* name, uint64_t fallback, uint64_t low, uint64_t high) {
  const char* v = getenv(name);
  if (!v || !*v) return fallback;
  char* end;
  unsigned long long n = strtoull(v, &end, 10);
  if (*end || n < low || n > high) return fallback;
  return n;
}

size_t ReadSmallFile(const char* path, char* buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t total = 0;
  while (total < cap) {
    ssize_t n = read(fd, buf + total, cap - total);
    if (n <= 0) break;
    total += static_cast<size_t>(n);
  }
  close(fd);
  return total;
}

// The control block profsh shares with every process of the session (on-demand requests, stop).
stream::ControlBlock* g_control = nullptr;
uint64_t g_requests_seen[stream::kControlRequests] = {};
bool g_stop_seen = false;

void MapControlBlock(const char* session) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", session, stream::kControlFile);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  void* p = RawMap(sizeof(stream::ControlBlock), PROT_READ | PROT_WRITE, MAP_SHARED, fd);
  close(fd);
  if (p == MAP_FAILED) return;
  auto* block = static_cast<stream::ControlBlock*>(p);
  if (__atomic_load_n(&block->magic, __ATOMIC_ACQUIRE) != stream::kControlMagic) {
    RawUnmap(p, sizeof(stream::ControlBlock));
    return;
  }
  g_control = block;
  // Requests made before this process started are not for it.
  for (int i = 0; i < stream::kControlRequests; ++i) {
    g_requests_seen[i] = __atomic_load_n(&block->requests[i].id, __ATOMIC_ACQUIRE);
  }
}

// The drain thread, every round: new on-demand requests for this process, and stop.
void PollControl() {
  if (g_control == nullptr) return;
  if (!g_stop_seen && __atomic_load_n(&g_control->stop, __ATOMIC_ACQUIRE) != 0) {
    g_stop_seen = true;
    StopRecording();
  }
  for (int i = 0; i < stream::kControlRequests; ++i) {
    stream::ControlRequest& r = g_control->requests[i];
    uint64_t id = __atomic_load_n(&r.id, __ATOMIC_ACQUIRE);
    if (id == g_requests_seen[i]) continue;
    g_requests_seen[i] = id;
    if (id != 0 && (r.pid == 0 || r.pid == g_pid)) ArmOnDemand(id, r.steps);
  }
}

std::string_view Clamped(const char* s) {
  return s ? std::string_view(s, strnlen(s, 1024)) : std::string_view();
}

void AppendConfig() {
  const StepConfig& c = step_config();
  stream::ConfigBlock config;
  config.flags = static_cast<uint8_t>(
      (c.has_schedule ? stream::kConfigSchedule : 0) | (c.capture ? stream::kConfigCapture : 0) |
      (c.on_demand ? stream::kConfigOnDemand : 0) |
      (c.marker || c.marker_regex ? stream::kConfigMarker : 0) | (g.cuda ? stream::kConfigCuda : 0) |
      (g.memory_left_out ? stream::kConfigMemoryLeftOut : 0));
  const int64_t schedule[6] = {c.schedule.skip_first, c.schedule.wait,
                               c.schedule.warmup,     c.schedule.active,
                               c.schedule.repeat,     c.schedule.skip_first_wait};
  memcpy(config.schedule, schedule, sizeof schedule);
  config.step_marker = Clamped(c.marker ? c.marker : c.marker_regex_text);
  config.capture_range = Clamped(c.capture);
  stream::AppendBlockTo(PendingBlocks(), config);
}

// Opens "<session>/<pid>-<n>.pstream" (the first n not taken: one per exec of this pid) and
// writes the file header and the kProcess block.
bool OpenStream(const char* session) {
  for (uint32_t n = 0; n < 1000; ++n) {
    snprintf(g_stream.path, sizeof g_stream.path, "%s/%d-%u%s", session, static_cast<int>(g_pid), n,
             stream::kFileSuffix);
    int fd = open(g_stream.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      AdoptStreamFd(fd);
      g_exec_index = n;
      break;
    }
    if (errno != EEXIST) return false;
  }
  if (g_stream.fd < 0) return false;
  g_stream.write_failed = false;
  g_stream.written = g_stream.round_start = g_stream.unwritten_events = 0;
  g_stream.rounds_refused = false;
  const stream::FileHeader header = stream::MakeFileHeader();
  stream::PutBytes(PendingBlocks(), &header, sizeof header);

  stream::ProcessBlock process;
  process.pid = g_pid;
  process.ppid = getppid();
  timespec real;
  clock_gettime(CLOCK_REALTIME, &real);
  process.start_ns = static_cast<int64_t>(real.tv_sec) * 1000000000 + real.tv_nsec;
  process.exec_index = g_exec_index;
  process.clock_kind = g.use_tsc ? stream::kClockTsc : stream::kClockMonotonic;
  static char command_line[16384], executable[4096], hostname[256];
  size_t n = ReadSmallFile("/proc/self/cmdline", command_line, sizeof command_line);
  while (n > 0 && command_line[n - 1] == '\0') --n;
  process.command_line = std::string_view(command_line, n);
  const ssize_t exe = readlink("/proc/self/exe", executable, sizeof executable);
  process.executable = std::string_view(executable, exe > 0 ? static_cast<size_t>(exe) : 0);
  if (gethostname(hostname, sizeof hostname) != 0) hostname[0] = '\0';
  hostname[sizeof hostname - 1] = '\0';
  process.hostname = hostname;
  stream::EnvVar env[sizeof kLauncherVars / sizeof kLauncherVars[0]];
  for (const char* var : kLauncherVars) {
    if (const char* value = getenv(var)) env[process.env_count++] = stream::EnvVar{var, value};
  }
  process.env = env;
  stream::AppendBlockTo(PendingBlocks(), process);
  AppendConfig();
  AppendClock();
  if (FlushBlocks()) return true;
  // Not even the header fits (a full file system): no stream rather than an unreadable one.
  close(g_stream.fd);
  g_stream.fd = -1;
  unlink(g_stream.path);
  return false;
}

void* DrainLoop(void*) {
  t_is_drain_thread = true;
  // Named from inside: the thread is detached, so its id is not the creator's to use later.
  pthread_setname_np(pthread_self(), "profsh-drain");
  double fullest = 0;
  while (!g_stop_drain.load(std::memory_order_acquire)) {
    // Rounds run every drain_ms: the stream on disk never lags by more than that (what a
    // SIGKILL can cost). A ring that passes its wake mark rings the bell and ends the wait at
    // once (ReserveSlow), and while a round still finds a ring busy the next one follows
    // without a wait: a thread recording as fast as it can is met by a drain thread that
    // asks for its share of the CPU instead of sleeping through it.
    if (fullest < 1.0 / 16 || g_stream.final_flushes_waiting.load(std::memory_order_relaxed)) {
      const uint32_t ms = g_stream.drain_ms;
      timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000};
      syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g.drain_bell), FUTEX_WAIT_PRIVATE, 0, &ts,
              nullptr, 0);
    }
    // Before the rings are read (a full barrier): a ring that passes its wake mark after this
    // rings again.
    g.drain_bell.exchange(0);
    pthread_mutex_lock(&g_stream.mutex);
    const uint32_t asked = g_gpu_flush_asked.load(std::memory_order_acquire);
    const bool forced = asked != g_gpu_flush_done.load(std::memory_order_relaxed);
    if (!Closed()) {
      PollControl();
      if (forced) g_stream.gpu_flush = kGpuFlushForced;
      fullest = DrainOnce(true);
      g_stream.gpu_flush = kGpuFlushRound;
    }
    pthread_mutex_unlock(&g_stream.mutex);
    if (forced) g_gpu_flush_done.store(asked, std::memory_order_release);
  }
  return nullptr;
}

void StartDrainThread() {
  // The drain thread takes no signals: the application's handlers keep running on its threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  // Nobody joins it: it ends with its process image (or stops after the final flush).
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  g_stop_drain.store(false, std::memory_order_release);
  pthread_t drain;
  pthread_create(&drain, &attr, DrainLoop, nullptr);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

__thread bool t_in_final_flush __attribute__((tls_model("initial-exec"))) = false;

// The last drain of a process image: everything still in the rings, then the end block.
// It may run from a signal handler (a handler calling _exit or exit): a flush the same thread
// is already in is not entered again, and the lock is waited for a bounded time only (the
// drain thread might be stuck behind whatever the handler interrupted). Giving up loses at most
// the last drain interval; the stream stays readable.
// The stream's lock within about 200 ms, or false.
bool LockStreamBounded() {
  bool locked = false;
  // The drain thread sees this between rings and between rounds, and lets go of the lock.
  g_stream.final_flushes_waiting.fetch_add(1, std::memory_order_relaxed);
  for (int i = 0; i < 200 && !(locked = pthread_mutex_trylock(&g_stream.mutex) == 0); ++i) {
    timespec ts{0, 1000000};
    nanosleep(&ts, nullptr);
  }
  g_stream.final_flushes_waiting.fetch_sub(1, std::memory_order_relaxed);
  return locked;
}

void FinalFlush(uint8_t reason) {
  if (!g.active || Closed() || t_in_final_flush) return;
  t_in_final_flush = true;
  // The drain's own buffers are not the workload's memory, whichever thread drains last.
  const bool was_drain_thread = t_is_drain_thread;
  t_is_drain_thread = true;
  if (LockStreamBounded()) {
    if (!Closed()) {
      // CUPTI's last records were asked for at exit() (FlushGpuAtExit); here, perhaps in a
      // signal handler or after libcupti's destructors, only complete buffers are encoded.
      g_stream.gpu_flush = kGpuFlushCompleteOnly;
      DrainOnce();
      g_stream.gpu_flush = kGpuFlushRound;
      AppendLossNotice();
      if (reason != stream::kEndExec) {
        // Later events (other threads, later destructors) are counted, not recorded.
        g.off.fetch_or(kOffClosed, std::memory_order_release);
        stream::AppendBlockTo(PendingBlocks(), stream::EndBlock{reason});
        FlushBlocks();
      } else {
        FlushBlocks();
      }
    }
    pthread_mutex_unlock(&g_stream.mutex);
  }
  t_is_drain_thread = was_drain_thread;
  t_in_final_flush = false;
}

void BeforeFork() {
  if (!g.active) return;
  const int saved_errno = errno;
  // The stream's mutex first, then the registry and steps locks: the drain thread holds the
  // mutex when it takes the steps lock (PollControl), so the other order could hang a fork. The
  // parent's stream is brought up to the fork before the spin locks are taken (threads at a step
  // boundary do not spin through the drain): a parent that ends without running exit handlers
  // or our _exit (daemon(3) ends it with libc's own) loses nothing it recorded.
  pthread_mutex_lock(&g_stream.mutex);
  if (!Closed()) {
    const bool was_drain_thread = t_is_drain_thread;
    t_is_drain_thread = true;  // the drain's buffers are not the workload's memory
    DrainOnce();
    t_is_drain_thread = was_drain_thread;
  }
  registry().LockForFork();
  LockStepsForFork();
  errno = saved_errno;
}

void AfterForkParent() {
  if (!g.active) return;
  UnlockStepsAfterFork();
  registry().UnlockAfterFork();
  pthread_mutex_unlock(&g_stream.mutex);
}

void AfterForkChild() {
  if (!g.active) return;
  const int saved_errno = errno;  // fork succeeded; what the program reads next is its own
  // Only the forking thread exists here; the parent writes what the rings held at the fork.
  pthread_mutex_init(&g_stream.mutex, nullptr);
  ResetStepLog();
  UnlockStepsAfterFork();
  registry().UnlockAfterFork();
  ResetGpuActivityAfterFork();
  // The parent reports its own losses; the child starts counting from zero.
  g.events_without_slot.store(0, std::memory_order_relaxed);
  g.events_after_close.store(0, std::memory_order_relaxed);
  g_strings.ResetOverflows();
  registry().ResetDroppedMetadata();
  g_pid = getpid();
  ThreadSlot* mine = t_slot;
  for (uint32_t i = 0; i < g.slot_count; ++i) {
    ThreadSlot& s = g.slots[i];
    uint64_t head = s.head.load(std::memory_order_relaxed);
    s.tail.store(head, std::memory_order_relaxed);
    s.limit = 0;
    if (&s != mine) s.state.store(kSlotFree, std::memory_order_relaxed);
    s.dropped_ranges.store(0, std::memory_order_relaxed);
    s.dropped_events.store(0, std::memory_order_relaxed);
    s.unmatched_pops.store(0, std::memory_order_relaxed);
  }
  if (mine) {
    mine->tid.store(getpid(), std::memory_order_relaxed);
    // Ranges open at the fork were pushed in the parent's stream: their pops are not the
    // child's to record.
    for (uint32_t level = 0; level < mine->depth; ++level) SetLevelSkipped(mine, level, true);
  }
  ResetDrainState();
  // The parent's stream, unless the workload closed it and the number is one of its own files.
  if (StreamFdIsOurs()) close(g_stream.fd);
  g_stream.fd = -1;
  // A parent that forks after its final flush (from an exit handler) hands the child a closed
  // flag; the child's stream is new and open.
  g.off.fetch_and(static_cast<uint8_t>(~kOffClosed), std::memory_order_relaxed);
  const char* session = getenv(stream::kEnvSession);
  if (!session || !OpenStream(session)) {
    // Sources that read the off flag directly (the PyTorch operator source) stop working too.
    g.off.fetch_or(kOffStopped, std::memory_order_relaxed);
    g.active = false;
    errno = saved_errno;
    return;
  }
  StartDrainThread();
  errno = saved_errno;
}

void SaveEnvironment() {
  const char* names[kSavedVars] = {
      stream::kEnvSession,     stream::kEnvActivities, stream::kEnvBufferKb,    stream::kEnvDrainMs,
      "NVTX_INJECTION64_PATH", "INTEL_LIBITTNOTIFY64", "CUDA_INJECTION64_PATH", stream::kEnvCupti};
  for (int i = 0; i < kSavedVars; ++i) {
    const char* v = getenv(names[i]);
    if (!v) continue;
    // NVTX, ITT and CUDA injection variables are given back only when they name this library.
    if (i >= 4 && i <= 6 && strcmp(v, g_self_path) != 0) continue;
    size_t n = strlen(names[i]) + 1 + strlen(v) + 1;
    g_saved_env[i] = static_cast<char*>(malloc(n));
    if (g_saved_env[i]) snprintf(g_saved_env[i], n, "%s=%s", names[i], v);
  }
}

bool EnvHas(char* const* envp, const char* entry) {
  size_t key = strchr(entry, '=') - entry + 1;
  for (char* const* e = envp; e && *e; ++e) {
    if (strncmp(*e, entry, key) == 0) return true;
  }
  return false;
}

}  // namespace

bool Initialize() {
  const char* session = getenv(stream::kEnvSession);
  if (!session || !*session) return false;
  Dl_info self;
  if (dladdr(reinterpret_cast<void*>(&Initialize), &self) && self.dli_fname) {
    snprintf(g_self_path, sizeof g_self_path, "%s", self.dli_fname);
  }
  const char* activities = getenv(stream::kEnvActivities);
  g.nvtx = !activities || strstr(activities, "nvtx") != nullptr;
  g.itt = !activities || strstr(activities, "itt") != nullptr;
  g.cuda = activities && strstr(activities, "cuda") != nullptr;
  g.memory_left_out = !RecordsMemoryHere();
#if defined(__x86_64__) || defined(__i386__)
  // The TSC is a usable clock only when it ticks at a constant rate in every power state.
  g.use_tsc = HasCpuFlag("constant_tsc") && HasCpuFlag("nonstop_tsc") && !getenv("PROFSH_NO_TSC");
#endif
  g_stream.drain_ms = static_cast<uint32_t>(EnvNumber(stream::kEnvDrainMs, 20, 1, 100));
  // The launcher checked the configuration: only a hand-made environment fails here.
  if (!ConfigureSteps()) return false;
  // 8 MiB (512 Ki records): a thread recording as fast as it can fills it in about 6 ms, time
  // for a drain thread that shares a busy machine to be scheduled; 2 MiB lost most of such a
  // thread's ranges on the 2-core build machine. Pages are resident only once written.
  uint64_t ring_kb = EnvNumber(stream::kEnvBufferKb, 8192, 64, 1 << 20);
  uint64_t records = 1;
  while (records * sizeof(Record) < ring_kb * 1024) records <<= 1;
  // A flight recorder bounds the rings' total: each ring is at most that total.
  g.ring_bytes_limit = EnvNumber(stream::kEnvRingTotalKb, 0, 0, uint64_t{1} << 30) * 1024;
  while (g.ring_bytes_limit != 0 && records > 1024 && records * sizeof(Record) > g.ring_bytes_limit)
    records >>= 1;

  // Slots are reserved here; each thread's ring is mapped when the thread first needs it.
  void* slots = RawMap(sizeof(ThreadSlot) * kSlotCount, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  if (slots == MAP_FAILED) return false;
  g.slots = static_cast<ThreadSlot*>(slots);
  for (uint32_t i = 0; i < kSlotCount; ++i) {
    ThreadSlot* s = new (&g.slots[i]) ThreadSlot();
    s->ring = nullptr;
    s->mask = records - 1;
    s->index = i;
  }
  g.slot_count = kSlotCount;
  g.ring_records = records;
  g_strings.SetTagger(TagsForName);
  if (!g_strings.Init(kStringCapacity, kStringArenaBytes) || !registry().Init(&g_strings))
    return false;
  InitSlotKey();
  g_pid = getpid();
  SaveEnvironment();
  if (!OpenStream(session)) return false;
  MapControlBlock(session);
  g.active = true;
  pthread_atfork(BeforeFork, AfterForkParent, AfterForkChild);
  StartDrainThread();
  // After the drain thread: the collector's own thread is not the workload's, and gets no timer.
  StartTimerSampling(session);
  return true;
}

void FlushGpuAtExit() {
  if (!g.active || Closed() || getpid() != g_pid) return;
  const bool was_drain_thread = t_is_drain_thread;
  t_is_drain_thread = true;
  if (LockStreamBounded()) {
    if (!Closed()) {
      g_stream.gpu_flush = kGpuFlushForced;
      DrainOnce();
      g_stream.gpu_flush = kGpuFlushRound;
    }
    StopGpuActivity();
    pthread_mutex_unlock(&g_stream.mutex);
  } else {
    StopGpuActivity();
  }
  t_is_drain_thread = was_drain_thread;
}

// exec and _exit skip exit()'s handlers, so CUPTI's last, partly filled buffer is asked for
// here. They may be called from a signal handler that interrupted CUPTI inside its own lock:
// the drain thread (which takes no signals, so is never that thread) flushes CUPTI, and this
// thread waits for it 200 ms at most. Then CUPTI is off (an exec that fails turns it on again).
void FlushGpuBeforeImageEnds(bool for_exec) {
  if (!GpuActivityOn()) return;
  if (!t_is_drain_thread && !g_stop_drain.load(std::memory_order_acquire)) {
    const uint32_t asked = g_gpu_flush_asked.fetch_add(1, std::memory_order_acq_rel) + 1;
    g.drain_bell.store(1, std::memory_order_release);
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g.drain_bell), FUTEX_WAKE_PRIVATE, 1, nullptr,
            nullptr, 0);
    for (int waited_ms = 0; waited_ms < 200; ++waited_ms) {
      const uint32_t done = g_gpu_flush_done.load(std::memory_order_acquire);
      if (static_cast<int32_t>(done - asked) >= 0) break;
      timespec ms{0, 1000000};
      nanosleep(&ms, nullptr);
    }
  }
  StopGpuActivity(for_exec);
}

void Shutdown(uint8_t reason) {
  if (!g.active) return;
  // After vfork the child shares our memory and must not touch it; its pid tells.
  if (getpid() != g_pid) return;
  StopTimerSampling(reason == stream::kEndExec);
  if (reason == stream::kEndExec || reason == stream::kEndUnderscoreExit)
    FlushGpuBeforeImageEnds(reason == stream::kEndExec);
  FinalFlush(reason);
  if (reason != stream::kEndExec) {
    g_stop_drain.store(true, std::memory_order_release);
  }
}

void ExecFailed() {
  if (!g.active || getpid() != g_pid) return;
  const int exec_errno = errno;  // why exec failed, which the caller reads next
  pthread_mutex_lock(&g_stream.mutex);
  stream::AppendBlockTo(PendingBlocks(), stream::ExecFailedBlock{});
  FlushBlocks();
  pthread_mutex_unlock(&g_stream.mutex);
  ResumeTimerSamplingAfterFailedExec();
  ResumeGpuActivityAfterFailedExec();
  errno = exec_errno;
}

void BeforeExec(const char* path) {
  if (!g.active || getpid() != g_pid) return;
  const int saved_errno = errno;
  Shutdown(stream::kEndExec);
  pthread_mutex_lock(&g_stream.mutex);
  stream::AppendBlockTo(PendingBlocks(),
                        stream::ExecBlock{std::string_view(path, strnlen(path, 4000))});
  FlushBlocks();
  pthread_mutex_unlock(&g_stream.mutex);
  errno = saved_errno;
}

// "LD_PRELOAD=<this library> <the rest>" when a new environment dropped us from the list.
// Static, not heap: this may run in a vfork child, which shares the parent's memory.
char g_preload_entry[8192];

char** EnvironmentForExec(char* const* envp, char** room, size_t room_entries) {
  if (!g.active || g_self_path[0] == '\0') return const_cast<char**>(envp);
  const char* preload = nullptr;
  for (char* const* e = envp; e && *e; ++e) {
    if (strncmp(*e, "LD_PRELOAD=", 11) == 0) preload = *e + 11;
  }
  const bool preload_ok = preload && strstr(preload, g_self_path) != nullptr;
  bool missing = !preload_ok;
  for (char* saved : g_saved_env) missing = missing || (saved && !EnvHas(envp, saved));
  if (!missing) return const_cast<char**>(envp);
  if (!preload_ok) {
    snprintf(g_preload_entry, sizeof g_preload_entry, "LD_PRELOAD=%s%s%s", g_self_path,
             preload ? " " : "", preload ? preload : "");
  }
  size_t n = 0;
  for (char* const* e = envp; e && *e && n + kSavedVars + 2 < room_entries; ++e) {
    if (strncmp(*e, "LD_PRELOAD=", 11) != 0) room[n++] = *e;
  }
  room[n++] = preload_ok ? const_cast<char*>(preload - 11) : g_preload_entry;
  for (char* saved : g_saved_env) {
    if (saved && !EnvHas(envp, saved)) room[n++] = saved;
  }
  room[n] = nullptr;
  return room;
}

}  // namespace profsh::runtime

namespace {

__attribute__((constructor)) void ProfshRuntimeLoad() {
  profsh::runtime::Initialize();
}
__attribute__((destructor)) void ProfshRuntimeUnload() {
  profsh::runtime::Shutdown(profsh::stream::kEndExit);
}

}  // namespace
