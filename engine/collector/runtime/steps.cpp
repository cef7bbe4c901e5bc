#include "engine/collector/runtime/steps.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <atomic>

#include "engine/collector/runtime/drain.h"
#include "engine/collector/runtime/raw_map.h"
#include "engine/collector/runtime/registry.h"
#include "engine/collector/runtime/runtime.h"
#include "engine/stream/pattern.h"

namespace profsh::runtime {

namespace {

StepConfig g_config;
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;
int64_t g_step = -1;  // before the first boundary: no step
std::atomic<int32_t> g_capture_depth{0};
size_t g_capture_length = 0;

// Step, capture and demand records for the drain thread: a ring written under g_lock.
enum StepEventType : uint8_t {
  kEventStep = 1,
  kEventCapture = 2,
  kEventDemand = 3,
  kEventStop = 4
};
struct StepEvent {
  uint8_t type;
  uint8_t action;
  uint64_t ticks;
  int64_t a, b;
};
// 16384 records (512 KiB, touched only as far as records come): steps of 5 us fill a quarter in
// 20 ms, when the log rings the drain thread's bell, and the rest gives a drain thread kept off
// the CPU 60 ms more before a boundary is lost (4096, with no bell, lost steps under 200 us
// on a loaded machine).
constexpr uint64_t kRing = 16384;
constexpr uint64_t kRingWakeMark = kRing / 4;
StepEvent g_ring[kRing];
std::atomic<uint64_t> g_written{0};
std::atomic<uint64_t> g_read{0};
std::atomic<uint64_t> g_lost{0};

// On-demand requests not yet started: one window at a time, in the order they came. A request
// that arrives while another one's window is being recorded waits for that window's last step
// instead of replacing its schedule (which cut or stretched the window under way and left the
// replaced request without one). As many as the control block has request slots.
struct PendingDemand {
  uint64_t request;
  int64_t steps;
};
constexpr int kPendingDemands = stream::kControlRequests;
PendingDemand g_pending_demands[kPendingDemands];
int g_pending_count = 0;
int64_t g_demand_last_step = -1;  // the last step of the request armed last

void Lock() {
  while (g_lock.test_and_set(std::memory_order_acquire)) sched_yield();
}
void Unlock() {
  g_lock.clear(std::memory_order_release);
}

// Caller holds g_lock.
void Log(uint8_t type, uint8_t action, uint64_t ticks, int64_t a, int64_t b) {
  uint64_t w = g_written.load(std::memory_order_relaxed);
  if (w - g_read.load(std::memory_order_acquire) >= kRing) {
    g_lost.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  g_ring[w % kRing] = StepEvent{type, action, ticks, a, b};
  g_written.store(w + 1, std::memory_order_release);
  // Short steps fill the log faster than rounds come: the drain thread is asked for one now.
  if (w + 1 - g_read.load(std::memory_order_relaxed) >= kRingWakeMark) RingDrainBell();
}

void SetOff(uint8_t bit, bool on) {
  if (on) {
    g.off.fetch_or(bit, std::memory_order_relaxed);
  } else {
    g.off.fetch_and(static_cast<uint8_t>(~bit), std::memory_order_relaxed);
  }
}

bool ParseSchedule(const char* text, Schedule* s) {
  long long v[6];
  int n = sscanf(text, "%lld,%lld,%lld,%lld,%lld,%lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]);
  if (n != 6) return false;
  *s = Schedule{v[0], v[1], v[2], v[3], v[4], v[5]};
  return s->Valid();
}

// Names counted before the first step, by id (ids beyond are not counted): reserved address
// space, touched only where names are counted.
constexpr uint32_t kCountedNames = 1u << 20;
std::atomic<uint32_t>* g_name_counts = nullptr;
uint64_t g_name_count_rounds = 0;
uint64_t g_name_counts_written = 0;  // the sum of the counts last written

}  // namespace

void CountNameBeforeFirstStep(uint32_t name) {
  // A load and a store, not an atomic add: threads counting one name at once may lose a few
  // counts, which a hint can afford, and no locked instruction is paid per event.
  if (g_name_counts && name < kCountedNames) {
    std::atomic<uint32_t>& count = g_name_counts[name];
    count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
}

void DrainNameCounts(bool final) {
  if (!g_name_counts || !(g.off.load(std::memory_order_relaxed) & kOffBeforeFirstStep)) return;
  // About once a second at the default 20 ms rounds.
  if (!final && ++g_name_count_rounds % 50 != 0) return;
  stream::NameCountsBlock block;
  uint64_t total = 0;
  const uint32_t allocated = registry().strings().allocated();
  for (uint32_t id = 0; id < allocated && id < kCountedNames; ++id) {
    const uint32_t count = g_name_counts[id].load(std::memory_order_relaxed);
    if (count == 0) continue;
    total += count;
    // Insertion into the short list, most frequent first.
    uint32_t at = block.n;
    while (at > 0 && block.counts[at - 1] < count) --at;
    if (at >= stream::kMostFrequentNames) continue;
    const uint32_t kept = block.n < stream::kMostFrequentNames ? block.n : block.n - 1;
    for (uint32_t i = kept; i > at; --i) {
      block.names[i] = block.names[i - 1];
      block.counts[i] = block.counts[i - 1];
    }
    block.names[at] = id;
    block.counts[at] = count;
    if (block.n < stream::kMostFrequentNames) ++block.n;
  }
  if (total == g_name_counts_written) return;
  g_name_counts_written = total;
  stream::AppendBlockTo(PendingBlocks(), block);
}

const StepConfig& step_config() {
  return g_config;
}

bool ConfigureSteps() {
  if (const char* s = getenv(stream::kEnvSchedule); s && *s) {
    if (!ParseSchedule(s, &g_config.schedule)) return false;
    g_config.has_schedule = true;
  }
  if (const char* m = getenv(stream::kEnvStepMarker); m && *m) {
    if (!stream::PatternValid(m)) return false;
    g_config.marker = m;
  } else if (const char* r = getenv(stream::kEnvStepRegex); r && *r) {
    // Compiled once and kept for the life of the process: names are tagged until it ends.
    g_config.marker_regex = stream::CompileStepRegex(r, nullptr);
    if (g_config.marker_regex == nullptr) return false;
    g_config.marker_regex_text = r;
  }
  if (const char* c = getenv(stream::kEnvCaptureRange); c && *c) {
    g_config.capture = c;
    g_capture_length = strlen(c);
  }
  g_config.on_demand = getenv(stream::kEnvOnDemand) != nullptr;
  // Before the first step, a schedule (or an idle on-demand session) records nothing; outside
  // capture ranges nothing is recorded either.
  if (g_config.has_schedule || g_config.on_demand) {
    SetOff(kOffSchedule, true);
    if (g_config.marker || g_config.marker_regex) {
      g_name_counts = static_cast<std::atomic<uint32_t>*>(
          RawMap(kCountedNames * sizeof(std::atomic<uint32_t>), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE));
      if (g_name_counts == MAP_FAILED) g_name_counts = nullptr;
      if (g_name_counts) SetOff(kOffBeforeFirstStep, true);
    }
  }
  if (g_config.capture) SetOff(kOffCapture, true);
  return true;
}

uint32_t TagsForName(const char* text, size_t length) {
  uint32_t tags = 0;
  if (g_config.marker && stream::PatternFind(g_config.marker, text, length)) tags |= kTagStepMarker;
  if (g_config.marker_regex && stream::StepRegexFind(g_config.marker_regex, text, length))
    tags |= kTagStepMarker;
  if (g_config.capture && length == g_capture_length &&
      memcmp(text, g_config.capture, length) == 0) {
    tags |= kTagCaptureRange;
  }
  return tags;
}

// Caller holds g_lock. Arms the oldest waiting request for the steps from `first` on, once the
// window armed before it is over.
void StartWaitingDemand(int64_t first) {
  if (g_pending_count == 0 || first <= g_demand_last_step) return;
  const PendingDemand d = g_pending_demands[0];
  for (int i = 1; i < g_pending_count; ++i) g_pending_demands[i - 1] = g_pending_demands[i];
  --g_pending_count;
  const int64_t steps = d.steps > 0 ? d.steps : 1;
  // The next `steps` steps are recorded: a one-cycle schedule that starts at `first`.
  g_config.schedule = Schedule{first, 0, 0, steps, 1, 0};
  g_config.has_schedule = true;
  g_demand_last_step = first + steps - 1;
  // Before the step block that opens the window: the reader labels the window with it.
  Log(kEventDemand, 0, Now(), static_cast<int64_t>(d.request), first);
}

void StepBoundary() {
  Lock();
  const uint64_t ticks = Now();
  ++g_step;
  SetOff(kOffBeforeFirstStep, false);
  StartWaitingDemand(g_step);
  ProfilerAction action = ProfilerAction::kRecord;
  if (g_config.has_schedule) {
    action = g_config.schedule.Action(g_step);
  } else if (g_config.on_demand) {
    action = ProfilerAction::kNone;
  }
  SetOff(kOffSchedule, action == ProfilerAction::kNone);
  Log(kEventStep, static_cast<uint8_t>(action), ticks, g_step, 0);
  Unlock();
}

uint32_t OnTaggedName(ThreadSlot* s, uint32_t tagged, int64_t level) {
  if (tagged & kTagStepMarker) StepBoundary();
  if ((tagged & kTagCaptureRange) && level >= 0) {
    Lock();
    if (g_capture_depth.fetch_add(1, std::memory_order_relaxed) == 0) {
      SetOff(kOffCapture, false);
      Log(kEventCapture, 1, Now(), 0, 0);
    }
    Unlock();
    SetLevelMark(s, static_cast<uint32_t>(level), kLevelCapture, true);
  }
  return tagged & kIdMask;
}

void OnCaptureEnd(ThreadSlot* s, uint32_t level) {
  SetLevelMark(s, level, kLevelCapture, false);
  Lock();
  if (g_capture_depth.fetch_sub(1, std::memory_order_relaxed) == 1) {
    SetOff(kOffCapture, true);
    Log(kEventCapture, 0, Now(), 0, 0);
  }
  Unlock();
}

void ArmOnDemand(uint64_t request, int64_t steps) {
  Lock();
  if (g_pending_count < kPendingDemands) {
    g_pending_demands[g_pending_count++] = PendingDemand{request, steps};
  } else {
    g_lost.fetch_add(1, std::memory_order_relaxed);
  }
  // Idle: the window starts at the next boundary (the current step is partly over).
  StartWaitingDemand(g_step + 1);
  Unlock();
}

void StopRecording() {
  Lock();
  SetOff(kOffStopped, true);
  Log(kEventStop, 0, Now(), 0, 0);
  Unlock();
}

void DrainStepEvents() {
  uint64_t r = g_read.load(std::memory_order_relaxed);
  const uint64_t w = g_written.load(std::memory_order_acquire);
  BlockBuffer& out = PendingBlocks();
  for (; r < w; ++r) {
    const StepEvent& e = g_ring[r % kRing];
    switch (e.type) {
      case kEventStep:
        stream::AppendBlockTo(out, stream::StepBlock{e.ticks, e.a, e.action});
        break;
      case kEventCapture:
        stream::AppendBlockTo(out, stream::CaptureBlock{e.ticks, e.action});
        break;
      case kEventDemand:
        stream::AppendBlockTo(out, stream::DemandBlock{e.ticks, e.a, e.b});
        break;
      default:
        stream::AppendBlockTo(out, stream::StopBlock{e.ticks});
        break;
    }
  }
  g_read.store(r, std::memory_order_release);
}

uint64_t LostStepRecords() {
  return g_lost.load(std::memory_order_relaxed);
}

void ResetStepLog() {
  g_read.store(g_written.load(std::memory_order_relaxed), std::memory_order_relaxed);
  g_lost.store(0, std::memory_order_relaxed);  // the child reports its own
  // Its own names too (a DataLoader worker would report its parent's counts again).
  if (g_name_counts) {
    const uint32_t allocated = registry().strings().allocated();
    for (uint32_t id = 0; id < allocated && id < kCountedNames; ++id) {
      // Read first: a page never counted in stays unwritten.
      if (g_name_counts[id].load(std::memory_order_relaxed) != 0)
        g_name_counts[id].store(0, std::memory_order_relaxed);
    }
  }
  g_name_counts_written = 0;
}
void LockStepsForFork() {
  Lock();
}
void UnlockStepsAfterFork() {
  Unlock();
}

}  // namespace profsh::runtime

// The C API of include/profsh.h: a program marks the start of each step.
extern "C" __attribute__((visibility("default"))) void profsh_collector_step(void) {
  if (profsh::runtime::g.active) profsh::runtime::StepBoundary();
}
