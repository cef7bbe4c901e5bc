#include "engine/collector/runtime/timer_sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <new>

#include "engine/collector/runtime/raw_map.h"
#include "engine/stream/sample_codec.h"
#include "engine/stream/stream_format.h"

namespace profsh::runtime {

namespace {

namespace st = stream;

// The registers perf_event_open copies (every one but DS, ES, FS, GS), in its order.
constexpr uint64_t kRegsMask = ((uint64_t{1} << 24) - 1) & ~(uint64_t{0xf} << 12);
constexpr int kRegs = 20;
constexpr uint32_t kRingSamples = 64;  // ~64 ms of one thread's samples at 999 Hz
constexpr uint32_t kMaxThreads = 1024;

struct RingSample {
  uint64_t time_ns;
  uint64_t regs[kRegs];
  uint32_t stack_len;
  uint32_t weight;  // 1 + the expirations the kernel merged into this signal, capped
  // then the stack bytes
};

struct SampleSlot {
  std::atomic<uint64_t> head{0};  // written by the signal handler
  std::atomic<uint64_t> tail{0};  // written by the writer thread
  std::atomic<uint64_t> dropped{0};
  // Expirations past the weight cap: periods the thread ran with the signal blocked.
  std::atomic<uint64_t> blocked_periods{0};
  // The thread's CPU time when its timer was armed, and the periods its signals stood for since
  // (before the cap): what its CPU time says it ran past them was never sampled.
  int64_t cpu_at_arm_ns = 0;
  std::atomic<uint64_t> periods_signalled{0};
  std::atomic<bool> live{false};
  // Set by the thread's key destructor (pthread_exit, cancel, return): the writer drains what is
  // left and puts the slot on the free list.
  std::atomic<bool> exited{false};
  std::atomic<uint32_t> next_free{0};  // 1 + the next free slot's index; 0 ends the list
  pid_t tid = 0;
  uintptr_t stack_lo = 0, stack_hi = 0;
  timer_t timer{};
  std::atomic<bool> has_timer{false};
  uint8_t* ring = nullptr;
};

struct Sampler {
  // Read by every thread (pthread_create's wrapper, the handler's callers), set by one.
  std::atomic<bool> active{false};
  bool paused_for_exec = false;
  bool writer_running = false;  // touched only by who starts and stops sampling
  // Set by the writer when the program installed a handler of its own for our signal.
  std::atomic<bool> handler_replaced{false};
  pid_t pid = 0;
  int signal = 0;
  uint32_t rate_hz = 999;
  uint32_t max_weight = 11;  // see MaxWeight()
  uint32_t stack_bytes = 8192;
  size_t slot_bytes = 0;
  SampleSlot* slots = nullptr;
  std::atomic<uint32_t> slot_count{0};
  std::atomic<uint64_t> threads_without_slot{0};
  // Periods threads ran after their last signal, up to their end or sampling's: a loaded machine
  // delays CPU-time timers' signals by tens of milliseconds, and a thread may end first.
  std::atomic<uint64_t> unsignalled_periods{0};
  // The free slots: low 32 bits 1 + the first's index (0: none), high 32 bits a count of
  // changes, so that a pop racing other pops and a push never takes a stale next (ABA).
  std::atomic<uint64_t> free_head{0};
  pthread_key_t slot_key{};
  int fd = -1;
  pthread_t writer{};
  std::atomic<bool> stop{false};
  // The writer's encoding buffer.
  uint8_t* out = nullptr;
  size_t out_capacity = 0, out_used = 0;
  // Executable mappings already written: (start, end, offset).
  uint64_t (*written_maps)[3] = nullptr;
  size_t written_map_count = 0;
  char* maps_text = nullptr;
  size_t maps_capacity = 0;
  // Why the fallback runs (the launcher's words), and the summary's note built from it.
  char reason[512] = {};
  char note[1024] = {};
  uint64_t dropped_reported = 0;
};
Sampler g;
__thread SampleSlot* t_slot __attribute__((tls_model("initial-exec"))) = nullptr;

// A sink for the codec over the fixed buffer; Room() refuses what does not fit.
struct OutSink {
  uint8_t* Room(size_t n) {
    return g.out_used + n <= g.out_capacity ? g.out + g.out_used : nullptr;
  }
  void Advance(size_t n) { g.out_used += n; }
  size_t size() const { return g.out_used; }
  uint8_t* At(size_t i) { return g.out + i; }
};

void Flush() {
  size_t done = 0;
  while (done < g.out_used) {
    ssize_t n = write(g.fd, g.out + done, g.out_used - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  g.out_used = 0;
}

void EnsureRoom(size_t n) {
  if (g.out_used + n > g.out_capacity) Flush();
}

int64_t Now(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void OnTimer(int, siginfo_t* info, void* context) {
  // Only our timers' expirations are samples: a kill() or sigqueue() of this signal is not.
  if (info == nullptr || info->si_code != SI_TIMER) return;
  SampleSlot* s = t_slot;
  if (s == nullptr) return;
  const int saved_errno = errno;
  // Counted as signalled even when the ring is full: a dropped sample is reported as dropped,
  // not again as periods no signal stood for.
  const int overrun = info->si_overrun;
  const uint32_t weight = 1 + static_cast<uint32_t>(overrun > 0 ? overrun : 0);
  s->periods_signalled.fetch_add(weight, std::memory_order_relaxed);
  const uint64_t head = s->head.load(std::memory_order_relaxed);
  if (head - s->tail.load(std::memory_order_acquire) >= kRingSamples) {
    s->dropped.fetch_add(1, std::memory_order_relaxed);
    errno = saved_errno;
    return;
  }
  auto* r = reinterpret_cast<RingSample*>(s->ring + (head % kRingSamples) * g.slot_bytes);
  const greg_t* gr = static_cast<ucontext_t*>(context)->uc_mcontext.gregs;
  static constexpr int kOrder[kRegs] = {
      REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, REG_RBP, REG_RSP, REG_RIP, REG_EFL,
      -1,      -1,      REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
  for (int k = 0; k < kRegs; ++k)
    r->regs[k] = kOrder[k] < 0 ? 0 : static_cast<uint64_t>(gr[kOrder[k]]);
  r->time_ns = static_cast<uint64_t>(Now(CLOCK_MONOTONIC));
  const uintptr_t sp = static_cast<uintptr_t>(gr[REG_RSP]);
  uint32_t n = 0;
  // Only the thread's own stack is read: past its top is unmapped memory (and a handler on
  // an alternate stack has no slice to copy).
  if (sp >= s->stack_lo && sp < s->stack_hi) {
    const uintptr_t room = s->stack_hi - sp;
    n = static_cast<uint32_t>(room < g.stack_bytes ? room : g.stack_bytes);
    memcpy(reinterpret_cast<uint8_t*>(r) + sizeof(RingSample), reinterpret_cast<const void*>(sp),
           n);
  }
  r->stack_len = n;
  // CPU-time timers expire on the scheduler tick: a 1 ms period under a 4 ms tick fires once
  // with 3 overruns, and the sample stands for all four periods.
  // The timer fires only on a tick that finds the thread running, so on a loaded machine one
  // signal may stand for tens of periods, all spent in the code it interrupts. But a signal the
  // thread had blocked is delivered when a system call unblocks it (sigprocmask, ppoll...), and
  // the periods it waited ran elsewhere than that stack: past what a tick can merge, they are
  // counted as not sampled. A signal delivered at a system call's return is told by the
  // registers the syscall instruction leaves: rcx holds the return address, r11 the flags.
  const bool at_syscall_return =
      gr[REG_RCX] == gr[REG_RIP] && ((gr[REG_R11] ^ gr[REG_EFL]) & ~greg_t{0x10000}) == 0;
  r->weight = at_syscall_return && weight > g.max_weight ? g.max_weight : weight;
  if (r->weight < weight)
    s->blocked_periods.fetch_add(weight - r->weight, std::memory_order_relaxed);
  s->head.store(head + 1, std::memory_order_release);
  errno = saved_errno;
}

// New executable mappings of /proc/self/maps, written with time 0: mappings are only added
// while the process runs (a dlopen), so one valid from the start names the addresses right.
void WriteMappings() {
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  size_t used = 0;
  while (true) {
    if (used + 4096 > g.maps_capacity) break;  // a huge map: the rest is left out
    ssize_t n = read(fd, g.maps_text + used, g.maps_capacity - used - 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += static_cast<size_t>(n);
  }
  close(fd);
  g.maps_text[used] = '\0';
  char* line = g.maps_text;
  while (line && *line) {
    char* next = strchr(line, '\n');
    if (next) *next++ = '\0';
    unsigned long long start = 0, end = 0, offset = 0;
    char perms[5] = {};
    int path_at = 0;
    if (sscanf(line, "%llx-%llx %4s %llx %*s %*s %n", &start, &end, perms, &offset, &path_at) >=
            4 &&
        perms[2] == 'x') {
      bool seen = false;
      for (size_t k = 0; k < g.written_map_count && !seen; ++k) {
        seen = g.written_maps[k][0] == start && g.written_maps[k][1] == end &&
               g.written_maps[k][2] == offset;
      }
      if (!seen && g.written_map_count < 8192) {
        g.written_maps[g.written_map_count][0] = start;
        g.written_maps[g.written_map_count][1] = end;
        g.written_maps[g.written_map_count][2] = offset;
        ++g.written_map_count;
        st::SampleMappingBlock m;
        m.pid = g.pid;
        m.time_ns = 0;
        m.start = start;
        m.length = end - start;
        m.file_offset = offset;
        m.executable = 1;
        m.path = path_at > 0 ? line + path_at : "";
        EnsureRoom(4096 + 64);
        OutSink sink;
        st::AppendBlockTo(sink, m);
      }
    }
    line = next;
  }
}

// Only the writer releases (and only a drained slot of an ended thread); any thread takes.
void ReleaseSlot(uint32_t i) {
  SampleSlot& s = g.slots[i];
  s.exited.store(false, std::memory_order_relaxed);
  s.live.store(false, std::memory_order_release);
  uint64_t head = g.free_head.load(std::memory_order_acquire);
  do {
    s.next_free.store(static_cast<uint32_t>(head), std::memory_order_relaxed);
  } while (!g.free_head.compare_exchange_weak(head, ((head >> 32) + 1) << 32 | (i + 1),
                                              std::memory_order_acq_rel));
}

SampleSlot* TakeSlot() {
  uint64_t head = g.free_head.load(std::memory_order_acquire);
  while (static_cast<uint32_t>(head) != 0) {
    SampleSlot& s = g.slots[static_cast<uint32_t>(head) - 1];
    const uint64_t next = ((head >> 32) + 1) << 32 | s.next_free.load(std::memory_order_relaxed);
    if (g.free_head.compare_exchange_weak(head, next, std::memory_order_acq_rel)) return &s;
  }
  uint32_t n = g.slot_count.load(std::memory_order_relaxed);
  while (n < kMaxThreads) {
    if (g.slot_count.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel)) return &g.slots[n];
  }
  return nullptr;
}

void DrainRings() {
  const uint32_t n = g.slot_count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n && i < kMaxThreads; ++i) {
    SampleSlot& s = g.slots[i];
    if (!s.live.load(std::memory_order_acquire)) continue;
    // Read before head: every sample of an ended thread is in by then.
    const bool exited = s.exited.load(std::memory_order_acquire);
    const uint64_t head = s.head.load(std::memory_order_acquire);
    uint64_t tail = s.tail.load(std::memory_order_relaxed);
    for (; tail < head; ++tail) {
      const auto* r =
          reinterpret_cast<const RingSample*>(s.ring + (tail % kRingSamples) * g.slot_bytes);
      st::SampleBlock b;
      b.pid = g.pid;
      b.tid = s.tid;
      b.time_ns = r->time_ns;
      b.regs_mask = kRegsMask;
      b.regs = r->regs;
      b.stack =
          std::string_view(reinterpret_cast<const char*>(r) + sizeof(RingSample), r->stack_len);
      b.weight = r->weight;
      EnsureRoom(g.slot_bytes + 128);
      OutSink sink;
      st::AppendBlockTo(sink, b);
    }
    s.tail.store(tail, std::memory_order_release);
    if (exited) ReleaseSlot(i);
  }
}

// The drops since the last call (a process may pause for an exec that fails, and go on), and
// a configuration block again whose note says what was not sampled: the session's summary shows
// the last note it reads.
void WriteDrops() {
  uint64_t dropped = 0, blocked = 0;
  const uint32_t n = g.slot_count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n && i < kMaxThreads; ++i) {
    dropped += g.slots[i].dropped.load(std::memory_order_relaxed);
    blocked += g.slots[i].blocked_periods.load(std::memory_order_relaxed);
  }
  EnsureRoom(64 + sizeof g.note);
  OutSink sink;
  // Only the ring's drops are lost samples; the blocked periods are said in the note.
  st::AppendBlockTo(sink, st::SampleDropsBlock{0, 0, dropped - g.dropped_reported});
  g.dropped_reported = dropped;
  int used = snprintf(g.note, sizeof g.note, "%s", g.reason);
  auto add = [&](const char* format, uint64_t count) {
    if (count == 0 || used < 0 || static_cast<size_t>(used) >= sizeof g.note) return;
    used += snprintf(g.note + used, sizeof g.note - used, format,
                     static_cast<unsigned long long>(count));
  };
  add("; %llu sample periods not sampled: the thread had the signal blocked (or spent them in a "
      "long system call)",
      blocked);
  add("; %llu sample periods not sampled: threads ran them after their timer's last signal and "
      "ended first (a loaded machine delays CPU-time timers' signals; or the thread kept the "
      "signal blocked)",
      g.unsignalled_periods.load(std::memory_order_relaxed));
  add("; %llu threads not sampled: all slots were taken by live threads",
      g.threads_without_slot.load(std::memory_order_relaxed));
  if (g.handler_replaced.load(std::memory_order_acquire))
    add("; sampling stopped early: the program installed its own handler for signal %llu",
        static_cast<uint64_t>(g.signal));
  st::SampleConfigBlock config;
  config.method = st::kSampleTimer;
  config.rate_hz = g.rate_hz;
  config.stack_bytes = g.stack_bytes;
  config.note = g.note;
  st::AppendBlockTo(sink, config);
}

// Every timer off, once each (with ArmTimer's re-check, whichever runs last deletes).
// A thread's CPU clock, readable from any thread of the process (the clock id glibc's
// pthread_getcpuclockid makes: per-thread, scheduler time).
clockid_t ThreadCpuClock(pid_t tid) {
  return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 4 | 2);
}

// After the slot's timer is gone: the whole periods its thread ran that no signal stood for.
void CountUnsignalledPeriods(SampleSlot& s) {
  timespec ts{};
  if (clock_gettime(ThreadCpuClock(s.tid), &ts) != 0) return;  // ended meanwhile
  const int64_t ran = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec - s.cpu_at_arm_ns;
  const int64_t period = 1000000000L / g.rate_hz;
  const uint64_t expected = ran > 0 ? static_cast<uint64_t>(ran / period) : 0;
  const uint64_t signalled = s.periods_signalled.load(std::memory_order_relaxed);
  if (expected > signalled)
    g.unsignalled_periods.fetch_add(expected - signalled, std::memory_order_relaxed);
}

// `count_tails`: sampling ends with the threads still running (exit, exec), so the time they ran
// since their last signal is counted; not when the program took the signal away.
void DeleteTimers(bool count_tails = false) {
  g.active.store(false);
  const uint32_t n = g.slot_count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n && i < kMaxThreads; ++i) {
    if (g.slots[i].has_timer.exchange(false)) {
      timer_delete(g.slots[i].timer);
      if (count_tails) CountUnsignalledPeriods(g.slots[i]);
    }
  }
}

// The program may install a handler of its own for the signal we took (it was at its default
// when we took it): then the signal is the program's, and our timers must stop sending it.
void CheckHandlerIsOurs() {
  if (g.handler_replaced.load(std::memory_order_relaxed)) return;
  struct sigaction now {};
  if (sigaction(g.signal, nullptr, &now) != 0) return;
  if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == OnTimer) return;
  g.handler_replaced.store(true, std::memory_order_release);
  DeleteTimers();
}

// A clock block after each round: everything sampled before `mono` is written before it.
void WriteProgress(int64_t mono) {
  EnsureRoom(64);
  OutSink sink;
  st::AppendBlockTo(sink, st::ClockBlock{static_cast<uint64_t>(mono), mono, Now(CLOCK_REALTIME)});
}

void* WriterLoop(void*) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  for (uint32_t round = 1; !g.stop.load(std::memory_order_acquire); ++round) {
    timespec tick{0, 10 * 1000 * 1000};
    nanosleep(&tick, nullptr);
    CheckHandlerIsOurs();
    // Samples taken before `mono` are in the rings now (live_samples.h reads up to there).
    const int64_t mono = Now(CLOCK_MONOTONIC);
    DrainRings();
    if (round % 100 == 0) WriteMappings();  // libraries loaded since
    WriteProgress(mono);
    Flush();
  }
  return nullptr;
}

// The most periods a signal delivered at a system call's return may stand for: the scheduler
// tick fires CPU-time timers, and the coarsest tick Linux builds with is 100 Hz (CONFIG_HZ_100,
// 10 ms), so one signal merges ceil(10 ms / period) periods, plus one for a tick that lands just
// past a period's end; more means the signal waited blocked.
uint32_t MaxWeight(uint32_t rate_hz) {
  constexpr uint64_t kCoarsestTickNs = 10 * 1000 * 1000;
  const uint64_t period = 1000000000ull / rate_hz;
  return static_cast<uint32_t>((kCoarsestTickNs + period - 1) / period + 1);
}

// The highest real-time signal the program leaves at its default.
int FreeSignal() {
  for (int s = SIGRTMAX; s > SIGRTMIN + 2; --s) {
    struct sigaction old {};
    if (sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_DFL &&
        !(old.sa_flags & SA_SIGINFO))
      return s;
  }
  return 0;
}

void ArmTimer(SampleSlot& s) {
  sigevent ev{};
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = g.signal;
  ev._sigev_un._tid = s.tid;
  timer_t timer{};
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &timer) != 0) return;
  s.timer = timer;
  s.cpu_at_arm_ns = Now(ThreadCpuClock(s.tid));
  s.periods_signalled.store(0, std::memory_order_relaxed);
  s.has_timer.store(true);
  // Sampling may have stopped meanwhile (exit or exec in another thread, the writer seeing the
  // handler replaced): whoever takes has_timer back deletes the timer, once.
  if (!g.active.load()) {
    if (s.has_timer.exchange(false)) timer_delete(timer);
    return;
  }
  const long period = 1000000000L / g.rate_hz;
  itimerspec spec{{period / 1000000000L, period % 1000000000L},
                  {period / 1000000000L, period % 1000000000L}};
  timer_settime(timer, 0, &spec, nullptr);
}

// The thread's end, however it ends (return, pthread_exit, cancel): its timer off, its slot
// handed to the writer to drain and free.
void ThreadEnded(void* slot) {
  if (getpid() != g.pid) return;  // a fork child's thread: the timer ids are not its own
  auto* s = static_cast<SampleSlot*>(slot);
  if (s->has_timer.exchange(false)) {
    timer_delete(s->timer);
    CountUnsignalledPeriods(*s);
  }
  t_slot = nullptr;
  s->exited.store(true, std::memory_order_release);
}

}  // namespace

bool TimerSamplingActive() {
  return g.active.load(std::memory_order_acquire) && getpid() == g.pid;
}

void StartThreadTimer() {
  if (!TimerSamplingActive() || t_slot != nullptr) return;
  SampleSlot* slot = TakeSlot();
  if (slot == nullptr) {
    g.threads_without_slot.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  SampleSlot& s = *slot;
  if (s.ring == nullptr) {  // a slot used before keeps its ring
    void* ring = RawMap(g.slot_bytes * kRingSamples, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
    if (ring == MAP_FAILED) {
      s.exited.store(true, std::memory_order_relaxed);
      s.live.store(true, std::memory_order_release);  // the writer frees it
      return;
    }
    s.ring = static_cast<uint8_t*>(ring);
  }
  s.tid = static_cast<pid_t>(syscall(SYS_gettid));
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* addr = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
      s.stack_lo = reinterpret_cast<uintptr_t>(addr);
      s.stack_hi = s.stack_lo + size;
    }
    pthread_attr_destroy(&attr);
  }
  s.live.store(true, std::memory_order_release);
  t_slot = &s;
  pthread_setspecific(g.slot_key, &s);
  ArmTimer(s);
}

void StartTimerSampling(const char* session) {
  const char* spec = getenv(st::kEnvSampleTimer);
  if (spec == nullptr || *spec == '\0' || session == nullptr) return;
  unsigned rate = 999, stack = 8192;
  int reason_at = 0;
  if (sscanf(spec, "%u,%u,%n", &rate, &stack, &reason_at) < 1 || rate == 0 || rate > 100000) return;
  // The launcher says why perf_event_open failed after the numbers.
  const char* reason =
      reason_at > 0 && spec[reason_at] ? spec + reason_at : "perf_event_open was denied";
  if (stack > 65528) stack = 65528;
  g.rate_hz = rate;
  g.max_weight = MaxWeight(rate);
  g.stack_bytes = stack & ~7u;
  g.slot_bytes = (sizeof(RingSample) + g.stack_bytes + 63) & ~size_t{63};
  g.pid = getpid();
  g.signal = FreeSignal();
  void* slots = RawMap(sizeof(SampleSlot) * kMaxThreads, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  g.out_capacity = size_t{1} << 20;
  void* out = RawMap(g.out_capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
  g.maps_capacity = size_t{4} << 20;
  void* maps = RawMap(g.maps_capacity + sizeof(uint64_t[3]) * 8192, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  if (slots == MAP_FAILED || out == MAP_FAILED || maps == MAP_FAILED) return;
  g.slots = static_cast<SampleSlot*>(slots);
  for (uint32_t i = 0; i < kMaxThreads; ++i) new (&g.slots[i]) SampleSlot();
  g.out = static_cast<uint8_t*>(out);
  g.maps_text = static_cast<char*>(maps);
  g.written_maps = reinterpret_cast<uint64_t(*)[3]>(g.maps_text + g.maps_capacity);
  // One file per image of the process, as the main stream: an exec keeps the pid, and the
  // image before it has its own file.
  char path[4096];
  for (unsigned n = 0; n < 1000 && g.fd < 0; ++n) {
    snprintf(path, sizeof path, "%s/cpu-samples-%d-%u.psamples", session, static_cast<int>(g.pid),
             n);
    g.fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (g.fd < 0 && errno != EEXIST) return;
  }
  if (g.fd < 0) return;
  OutSink sink;
  st::FileHeader header{};
  memcpy(header.magic, st::kMagic, sizeof header.magic);
  header.version = st::kVersion;
  header.header_size = sizeof header;
  st::PutFixed(sink, header);
  const int64_t mono = Now(CLOCK_MONOTONIC);
  st::AppendBlockTo(sink, st::ClockBlock{static_cast<uint64_t>(mono), mono, Now(CLOCK_REALTIME)});
  st::SampleConfigBlock config;
  config.rate_hz = g.rate_hz;
  config.stack_bytes = g.stack_bytes;
  if (g.signal == 0) {
    config.method = st::kSampleNone;
    config.note = "perf_event_open was denied and no real-time signal is free for the timers";
    st::AppendBlockTo(sink, config);
    Flush();
    return;
  }
  config.method = st::kSampleTimer;
  snprintf(g.reason, sizeof g.reason, "%s", reason);
  config.note = g.reason;
  st::AppendBlockTo(sink, config);
  WriteMappings();
  Flush();
  struct sigaction sa {};
  sa.sa_sigaction = OnTimer;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(g.signal, &sa, nullptr) != 0) return;
  if (pthread_key_create(&g.slot_key, ThreadEnded) != 0) return;
  g.stop.store(false, std::memory_order_release);
  if (pthread_create(&g.writer, nullptr, WriterLoop, nullptr) != 0) return;
  g.writer_running = true;
  g.active.store(true, std::memory_order_release);
  StartThreadTimer();
}

void StopTimerSampling(bool for_exec) {
  if (!g.writer_running || getpid() != g.pid) return;
  g.writer_running = false;
  DeleteTimers(/*count_tails=*/true);
  g.stop.store(true, std::memory_order_release);
  pthread_join(g.writer, nullptr);
  DrainRings();
  WriteProgress(Now(CLOCK_MONOTONIC));  // every timer is off: nothing later comes
  WriteMappings();
  WriteDrops();
  Flush();
  // Before an exec the file stays open (close-on-exec closes it if the exec succeeds): a failed
  // exec goes on sampling into it.
  g.paused_for_exec = for_exec;
  if (!for_exec) {
    close(g.fd);
    g.fd = -1;
  }
}

void ResumeTimerSamplingAfterFailedExec() {
  if (!g.paused_for_exec || getpid() != g.pid || g.fd < 0) return;
  g.paused_for_exec = false;
  g.stop.store(false, std::memory_order_release);
  if (pthread_create(&g.writer, nullptr, WriterLoop, nullptr) != 0) {
    close(g.fd);
    g.fd = -1;
    return;
  }
  g.writer_running = true;
  if (g.handler_replaced.load(std::memory_order_acquire)) return;
  g.active.store(true, std::memory_order_release);
  // The threads are all still there: each gets its timer again (a timer for another thread of
  // the process is allowed; one for a thread that ended meanwhile fails and is skipped).
  const uint32_t n = g.slot_count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n && i < kMaxThreads; ++i) {
    SampleSlot& s = g.slots[i];
    if (s.live.load(std::memory_order_acquire) && !s.has_timer.load(std::memory_order_acquire))
      ArmTimer(s);
  }
}

}  // namespace profsh::runtime
