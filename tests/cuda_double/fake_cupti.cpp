// A test double of libcupti: the CUPTI 13 calls profsh's collector makes, over the real record
// structs of the toolkit's headers. The test driver (fake_cuda.cpp) hands it the records its
// calls generate (fakecupti_record); it buffers them in the buffers the client's request
// callback gives, completes a buffer when the next record does not fit or at a flush, counts
// what it cannot place as dropped, and stamps times with the client's timestamp callback.
//
// FAKE_CUPTI_SCENARIO (comma-separated) changes what the library answers:
//   other-subscriber   cuptiSubscribe fails as when torch.profiler or nsys holds CUPTI
//   version=N          cuptiGetVersion reports N
//   drop=N             CUPTI reports N records dropped (device buffers), once
//   late=NAME:MS       the records of kernels named NAME are handed over MS ms (wall time)
//                      after they were made, as a kernel queued behind long work on a real GPU
//                      (the first flush or record after that time places them; a forced flush,
//                      at exit, places them at once)
//   lost=NAME          the records of kernels named NAME never come (their launches' do)
//   signal-in-record=N SIGUSR1 is raised in the Nth record's hand-over, while CUPTI's lock is
//                      held (a handler that then calls _exit must not wait on CUPTI)
#include <cupti.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Fake {
  std::mutex mutex;
  bool subscribed = false;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  CUpti_TimestampCallbackFunc timestamp = nullptr;
  double ticks_per_ns = 1.0;  // of the client's clock, measured when it is registered
  bool enabled[128] = {};
  uint8_t* buffer = nullptr;
  size_t size = 0, used = 0;
  size_t dropped = 0;
  bool scenario_read = false;
  bool other_subscriber = false;
  uint32_t version = CUPTI_API_VERSION;
  size_t scripted_drops = 0;
  size_t untimed = 0;              // kernel records still to give end = CUPTI_TIMESTAMP_UNKNOWN
  bool register_fails = false;     // cuptiActivityRegisterCallbacks fails
  bool no_thread_id_type = false;  // cuptiSetThreadIdType fails (an older CUPTI's answer)
  std::atomic<int> thread_id_type{CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT};
  std::string late_kernel, lost_kernel;           // late=, lost=
  size_t signal_at_record = 0, records_seen = 0;  // signal-in-record=
  uint64_t late_ns = 0;
  struct Held {
    CUpti_ActivityKernel10 record;
    uint64_t due;  // CLOCK_MONOTONIC ns
  };
  std::vector<Held> held;  // late kernels' records, in the order they were made
};

// A record not handed to the client: CUPTI keeps what the client would have freed.
void DiscardRecord(const CUpti_Activity* a) {
  if (a->kind == CUPTI_ACTIVITY_KIND_OVERHEAD)
    free(reinterpret_cast<const CUpti_ActivityOverhead3*>(a)->overheadData);
}

// libcupti's destructors run at exit(); a tool that calls CUPTI after them (from its own
// destructor, say) is told on stderr, which the checks read.
bool g_destroyed = false;
struct Lifetime {
  ~Lifetime() { g_destroyed = true; }
} g_lifetime;

void Alive(const char* function) {
  if (g_destroyed) fprintf(stderr, "fake CUPTI: %s called after its destructor\n", function);
}

Fake& F() {
  static Fake f;
  return f;
}

void ReadScenario(Fake& f) {
  if (f.scenario_read) return;
  f.scenario_read = true;
  const char* s = getenv("FAKE_CUPTI_SCENARIO");
  if (s == nullptr) return;
  std::string text(s);
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(at, comma - at);
    if (item == "other-subscriber") f.other_subscriber = true;
    if (item == "no-thread-id-type") f.no_thread_id_type = true;
    if (item == "register-fails") f.register_fails = true;
    if (item.rfind("untimed=", 0) == 0) f.untimed = static_cast<size_t>(atol(item.c_str() + 8));
    if (item.rfind("version=", 0) == 0) f.version = static_cast<uint32_t>(atol(item.c_str() + 8));
    if (item.rfind("drop=", 0) == 0) f.scripted_drops = static_cast<size_t>(atol(item.c_str() + 5));
    if (item.rfind("late=", 0) == 0) {
      const size_t colon = item.find(':');
      f.late_kernel = item.substr(5, colon == std::string::npos ? std::string::npos : colon - 5);
      if (colon != std::string::npos)
        f.late_ns = uint64_t{1000000} * atol(item.c_str() + colon + 1);
    }
    if (item.rfind("lost=", 0) == 0) f.lost_kernel = item.substr(5);
    if (item.rfind("signal-in-record=", 0) == 0)
      f.signal_at_record = static_cast<size_t>(atol(item.c_str() + 17));
    at = comma + 1;
  }
}

size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
      return sizeof(CUpti_ActivityCudaEvent2);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      return sizeof(CUpti_ActivityContext3);
    default:
      return 0;
  }
}

size_t Aligned(size_t n) {
  return (n + 7) & ~size_t{7};
}

// Caller holds the mutex. The completion callback is called without it, as CUPTI calls it from
// its own thread while the application goes on.
void CompleteLocked(Fake& f, std::unique_lock<std::mutex>& lock) {
  if (f.buffer == nullptr) return;
  uint8_t* b = f.buffer;
  const size_t size = f.size, used = f.used;
  f.buffer = nullptr;
  f.size = f.used = 0;
  if (f.complete) {
    lock.unlock();
    f.complete(nullptr, 0, b, size, used);
    lock.lock();
  }
}

bool RequestLocked(Fake& f) {
  if (f.request == nullptr) return false;
  uint8_t* b = nullptr;
  size_t size = 0, max_records = 0;
  f.request(&b, &size, &max_records);
  if (b == nullptr || size == 0) return false;
  f.buffer = b;
  f.size = size;
  f.used = 0;
  return true;
}

}  // namespace

extern "C" {

// --- the test driver's side ---

// CUPTI's clock: the client's timestamp callback when it registered one, else CLOCK_REALTIME
// (what CUPTI uses on Linux).
uint64_t fakecupti_now(void) {
  Fake& f = F();
  if (f.timestamp) return f.timestamp();
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// A device duration in ns on CUPTI's clock.
uint64_t fakecupti_duration(uint64_t ns) {
  return static_cast<uint64_t>(static_cast<double>(ns) * F().ticks_per_ns + 0.5);
}

// Whether API records name threads by their OS id (cuptiSetThreadIdType(SYSTEM) succeeded).
int fakecupti_os_thread_ids(void) {
  return F().thread_id_type.load() == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM;
}

int fakecupti_enabled(int kind) {
  return kind >= 0 && kind < 128 && F().enabled[kind];
}

}  // extern "C"

namespace {

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void PlaceLocked(Fake& f, std::unique_lock<std::mutex>& lock, const CUpti_Activity* a, size_t n);

// Late kernels whose time has come (all of them when `all`) go into the buffer.
void PlaceDueLocked(Fake& f, std::unique_lock<std::mutex>& lock, bool all) {
  if (f.held.empty()) return;
  const uint64_t now = MonotonicNs();
  std::vector<Fake::Held> due;
  for (auto it = f.held.begin(); it != f.held.end();) {
    if (all || it->due <= now) {
      due.push_back(*it);
      it = f.held.erase(it);
    } else {
      ++it;
    }
  }
  for (const Fake::Held& h : due)
    PlaceLocked(f, lock, reinterpret_cast<const CUpti_Activity*>(&h.record), sizeof h.record);
}

// Whether a record is held back (late=) or never comes (lost=) instead of placed now.
bool DivertLocked(Fake& f, const CUpti_Activity* a) {
  if (a->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) return false;
  const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(a);
  const std::string_view name = k->name ? k->name : "";
  if (!f.lost_kernel.empty() && name == f.lost_kernel) return true;
  if (f.late_kernel.empty() || name != f.late_kernel) return false;
  f.held.push_back(Fake::Held{*k, MonotonicNs() + f.late_ns});
  return true;
}

}  // namespace

extern "C" {

// One activity record (a CUpti_Activity* struct) as CUPTI would write it.
void fakecupti_record(const void* record) {
  Fake& f = F();
  const auto* a = static_cast<const CUpti_Activity*>(record);
  const size_t n = RecordSize(a->kind);
  std::unique_lock<std::mutex> lock(f.mutex);
  if (n == 0 || a->kind >= 128 || !f.enabled[a->kind]) return DiscardRecord(a);
  if (f.signal_at_record != 0 && ++f.records_seen == f.signal_at_record) raise(SIGUSR1);
  PlaceDueLocked(f, lock, false);
  if (DivertLocked(f, a)) return;
  PlaceLocked(f, lock, a, n);
}

}  // extern "C"

namespace {

void PlaceLocked(Fake& f, std::unique_lock<std::mutex>& lock, const CUpti_Activity* a, size_t n) {
  const void* record = a;
  if (f.buffer != nullptr && f.used + Aligned(n) > f.size) CompleteLocked(f, lock);
  if (f.buffer == nullptr && !RequestLocked(f)) {
    ++f.dropped;
    return DiscardRecord(a);
  }
  if (f.used + Aligned(n) > f.size) {
    ++f.dropped;
    return DiscardRecord(a);
  }
  memcpy(f.buffer + f.used, record, n);
  if (f.untimed > 0 && a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
    --f.untimed;
    reinterpret_cast<CUpti_ActivityKernel10*>(f.buffer + f.used)->end = CUPTI_TIMESTAMP_UNKNOWN;
  }
  f.used += Aligned(n);
}

}  // namespace

extern "C" {

// --- CUPTI ---

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  Fake& f = F();
  ReadScenario(f);
  *version = f.version;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  *str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS"
         : result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
             ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
             : "CUPTI_ERROR_UNKNOWN";
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc, void*) {
  Fake& f = F();
  std::lock_guard<std::mutex> lock(f.mutex);
  ReadScenario(f);
  if (f.other_subscriber || f.subscribed) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  f.subscribed = true;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&f);
  return CUPTI_SUCCESS;
}

// The names of the calls the test driver makes, as the cbid headers spell them.
CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  Fake& f = F();
  std::lock_guard<std::mutex> lock(f.mutex);
  if (!f.subscribed || subscriber != reinterpret_cast<CUpti_SubscriberHandle>(&f))
    return CUPTI_ERROR_INVALID_PARAMETER;
  f.subscribed = false;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                          const char** name) {
  struct Name {
    CUpti_CallbackDomain domain;
    uint32_t cbid;
    const char* name;
  };
  static const Name names[] = {
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2, "cuMemcpyDtoD_v2"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer, "cuMemcpyPeer"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, "cuMemsetD8_v2"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, "cuMemFree_v2"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
       "cuStreamSynchronize"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice, "cuCtxGetDevice"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
       "cudaLaunchKernel_v7000"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy_v3020"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
       "cudaDeviceSynchronize_v3020"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020,
       "cudaEventRecord_v3020"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
       "cudaStreamWaitEvent_v3020"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
       "cudaEventSynchronize_v3020"},
  };
  for (const Name& n : names) {
    if (n.domain == domain && n.cbid == cbid) {
      *name = n.name;
      return CUPTI_SUCCESS;
    }
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                    CUpti_BuffersCallbackCompleteFunc complete) {
  Fake& f = F();
  std::lock_guard<std::mutex> lock(f.mutex);
  if (f.register_fails) return CUPTI_ERROR_UNKNOWN;
  f.request = request;
  f.complete = complete;
  return CUPTI_SUCCESS;
}

// CUPTI puts GPU times on the client's clock by interpolation; the test double measures the
// client clock's rate against CLOCK_MONOTONIC once (20 ms) and scales device durations by it.
CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn) {
  auto mono = [] {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  };
  const uint64_t m0 = mono(), t0 = fn();
  uint64_t m1 = m0, t1 = t0;
  while (m1 - m0 < 20000000) {
    m1 = mono();
    t1 = fn();
  }
  F().ticks_per_ns = static_cast<double>(t1 - t0) / static_cast<double>(m1 - m0);
  F().timestamp = fn;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  Fake& f = F();
  ReadScenario(f);
  if (f.no_thread_id_type) return CUPTI_ERROR_NOT_SUPPORTED;
  if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
    return CUPTI_ERROR_INVALID_PARAMETER;
  f.thread_id_type.store(type);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (static_cast<int>(kind) < 0 || kind >= 128 || RecordSize(kind) == 0)
    return CUPTI_ERROR_NOT_COMPATIBLE;
  F().enabled[kind] = true;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  Alive("cuptiActivityFlushAll");
  Fake& f = F();
  std::unique_lock<std::mutex> lock(f.mutex);
  PlaceDueLocked(f, lock, (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0);
  if (f.used > 0) CompleteLocked(f, lock);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid,
                                                CUpti_Activity** record) {
  Alive("cuptiActivityGetNextRecord");
  size_t at = 0;
  if (*record != nullptr) {
    at = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) +
         Aligned(RecordSize((*record)->kind));
  }
  if (at >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + at);
  const size_t n = RecordSize(next->kind);
  if (n == 0 || at + n > valid) return CUPTI_ERROR_INVALID_KIND;
  *record = next;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  Alive("cuptiActivityGetNumDroppedRecords");
  Fake& f = F();
  std::lock_guard<std::mutex> lock(f.mutex);
  *dropped = f.dropped + f.scripted_drops;
  f.dropped = f.scripted_drops = 0;
  return CUPTI_SUCCESS;
}

}  // extern "C"
