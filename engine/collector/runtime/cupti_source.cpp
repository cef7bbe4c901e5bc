#include "engine/collector/runtime/cupti_source.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <type_traits>

#include <cupti.h>

#include "engine/collector/runtime/process.h"
#include "engine/collector/runtime/raw_map.h"
#include "engine/collector/runtime/registry.h"
#include "engine/collector/runtime/runtime.h"
#include "engine/stream/gpu_records.h"

namespace profsh::runtime {
namespace {

namespace st = profsh::stream;

// The CUPTI entry points the collector uses, resolved from the libcupti it loads (never linked:
// a workload without CUDA must not need it, and the user may name another one).
struct CuptiApi {
  decltype(&cuptiGetVersion) GetVersion;
  decltype(&cuptiSubscribe) Subscribe;
  decltype(&cuptiUnsubscribe) Unsubscribe;
  decltype(&cuptiGetResultString) GetResultString;
  decltype(&cuptiGetCallbackName) GetCallbackName;
  decltype(&cuptiActivityRegisterCallbacks) RegisterCallbacks;
  decltype(&cuptiActivityRegisterTimestampCallback) RegisterTimestampCallback;
  decltype(&cuptiActivityEnable) Enable;
  decltype(&cuptiActivityFlushAll) FlushAll;
  decltype(&cuptiActivityGetNextRecord) GetNextRecord;
  decltype(&cuptiActivityGetNumDroppedRecords) GetNumDroppedRecords;
};

enum BufferState : uint32_t { kBufferFree = 0, kBufferWithCupti = 1, kBufferComplete = 2 };

struct PoolBuffer {
  std::atomic<uint32_t> state{kBufferFree};
  size_t valid = 0;    // written before state becomes kBufferComplete (release)
  uint64_t order = 0;  // completion order: buffers are encoded as CUPTI handed them back
};

constexpr uint32_t kMaxBuffers = 64;
// CUPTI 13.x only: the record structs of the 13.0 headers this is built with
// (CUpti_ActivityKernel10, Memcpy6, Memory4, ...) are what a 13.x CUPTI writes; another major
// version may write other layouts under the same kinds.
constexpr uint32_t kMinCuptiVersion = 130000;
constexpr uint32_t kEndCuptiVersion = 140000;

struct CuptiState {
  CuptiApi api{};
  std::atomic<bool> enabled{false};  // buffers registered and kinds enabled
  bool paused_for_exec = false;      // off around an exec that may fail
  uint8_t* base = nullptr;           // kMaxBuffers × buffer_bytes, reserved at injection
  size_t buffer_bytes = 0;
  uint32_t buffer_count = 0;
  PoolBuffer buffers[kMaxBuffers];
  std::atomic<uint64_t> completions{0};
  std::atomic<uint64_t> refused{0};  // requests declined: every buffer was with CUPTI or full
  uint64_t cupti_dropped = 0;        // drain thread: CUPTI's dropped counts, summed
  uint64_t kinds_ignored = 0;        // drain thread: records of kinds not kept
  uint64_t untimed = 0;              // drain thread: device records without valid times, skipped
  uint64_t unwritten = 0;            // drain thread: records the stream's buffer had no room for
  st::GpuDrops reported;             // drain thread: the counts last written
  // A line for the summary (no CUPTI, another subscriber, ...): written once by the injecting
  // thread, published by `notice_ready`, written into the stream by the drain thread.
  char notice[1024] = {};
  std::atomic<bool> notice_ready{false};
  bool notice_written = false;
  std::atomic<bool> injected{false};
  bool os_thread_ids = false;  // API records carry OS thread ids (set before kinds are enabled)
  // Names of runtime and driver calls by callback id, interned once (0: not yet).
  uint32_t api_names[2][1024] = {};
};

CuptiState g_cupti;

// The whole line is written before it is published: the drain may copy it at any time after.
void SetNotice(const char* fmt, const char* a = "", const char* b = "", const char* c = "") {
  if (g_cupti.notice_ready.load(std::memory_order_acquire)) return;
  snprintf(g_cupti.notice, sizeof g_cupti.notice, fmt, a, b, c);
  g_cupti.notice_ready.store(true, std::memory_order_release);
}

// CUPTI's clock is the collector's own (TSC ticks or CLOCK_MONOTONIC ns, as every event of the
// stream): CUPTI stamps API records with it and interpolates GPU times onto it, so nothing is
// aligned afterwards. The header asks for nanoseconds; a linear clock is what the interpolation
// needs, and Kineto registers its raw TSC the same way.
uint64_t CUPTIAPI CollectorTicks() {
  return Now();
}

// CUPTI asks for a buffer (on any thread, often its own): one from the pool, or none, which
// makes CUPTI drop records and count them (read by the drain).
void CUPTIAPI RequestBuffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  for (uint32_t i = 0; i < g_cupti.buffer_count; ++i) {
    uint32_t expected = kBufferFree;
    if (g_cupti.buffers[i].state.compare_exchange_strong(expected, kBufferWithCupti,
                                                         std::memory_order_acq_rel)) {
      *buffer = g_cupti.base + i * g_cupti.buffer_bytes;
      *size = g_cupti.buffer_bytes;
      return;
    }
  }
  g_cupti.refused.fetch_add(1, std::memory_order_relaxed);
  *buffer = nullptr;
  *size = 0;
}

void CUPTIAPI CompleteBuffer(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  if (buffer == nullptr || buffer < g_cupti.base) return;
  const size_t index = static_cast<size_t>(buffer - g_cupti.base) / g_cupti.buffer_bytes;
  if (index >= g_cupti.buffer_count) return;
  PoolBuffer& b = g_cupti.buffers[index];
  b.valid = valid;
  b.order = g_cupti.completions.fetch_add(1, std::memory_order_relaxed);
  b.state.store(kBufferComplete, std::memory_order_release);
}

void CUPTIAPI IgnoreCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// A libcupti the process loaded before the driver called the injection (torch's wheels bring
// their own, loaded with torch): a second copy in the process would be a second CUPTI on the one
// driver, so that one is used, or none.
char g_loaded_cupti[PATH_MAX];
int FindLoadedCupti(dl_phdr_info* info, size_t, void*) {
  const char* name = info->dlpi_name;
  const char* base = name ? strrchr(name, '/') : nullptr;
  base = base ? base + 1 : name;
  if (base == nullptr || strncmp(base, "libcupti.so", 11) != 0) return 0;
  snprintf(g_loaded_cupti, sizeof g_loaded_cupti, "%s", name);
  return 1;
}

void* OpenCupti() {
  g_loaded_cupti[0] = '\0';
  dl_iterate_phdr(FindLoadedCupti, nullptr);
  if (g_loaded_cupti[0] != '\0') {
    // Not reachable by name (another link namespace): still no second copy.
    return dlopen(g_loaded_cupti, RTLD_NOW | RTLD_NOLOAD);
  }
  if (const char* path = getenv(st::kEnvCupti); path && *path)
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
  const char* candidates[] = {
      "libcupti.so", "libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
      "/usr/local/cuda/lib64/libcupti.so", "/usr/local/cuda/lib/libcupti.so"};
  for (const char* c : candidates) {
    if (void* h = dlopen(c, RTLD_NOW | RTLD_LOCAL)) return h;
  }
  return nullptr;
}

const char* g_missing_entry = "";  // the first entry point the loaded libcupti lacks

template <typename F>
bool Resolve(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (*out == nullptr) g_missing_entry = name;
  return *out != nullptr;
}

const char* ResultText(CUptiResult r) {
  const char* text = nullptr;
  if (g_cupti.api.GetResultString && g_cupti.api.GetResultString(r, &text) == CUPTI_SUCCESS && text)
    return text;
  return "unknown CUPTI error";
}

bool ResolveApi(void* lib) {
  CuptiApi& a = g_cupti.api;
  return Resolve(lib, "cuptiGetVersion", &a.GetVersion) &&
         Resolve(lib, "cuptiSubscribe", &a.Subscribe) &&
         Resolve(lib, "cuptiUnsubscribe", &a.Unsubscribe) &&
         Resolve(lib, "cuptiGetResultString", &a.GetResultString) &&
         Resolve(lib, "cuptiGetCallbackName", &a.GetCallbackName) &&
         Resolve(lib, "cuptiActivityRegisterCallbacks", &a.RegisterCallbacks) &&
         Resolve(lib, "cuptiActivityRegisterTimestampCallback", &a.RegisterTimestampCallback) &&
         Resolve(lib, "cuptiActivityEnable", &a.Enable) &&
         Resolve(lib, "cuptiActivityFlushAll", &a.FlushAll) &&
         Resolve(lib, "cuptiActivityGetNextRecord", &a.GetNextRecord) &&
         Resolve(lib, "cuptiActivityGetNumDroppedRecords", &a.GetNumDroppedRecords);
}

// API records name their thread by its OS id, as the stream does, when CUPTI agrees; else by
// pthread_self(), looked up in the thread slots (OsThreadOf), which a reused pthread_t of a
// dead thread can fool.
bool OsThreadIds(void* lib) {
  auto set = reinterpret_cast<decltype(&cuptiSetThreadIdType)>(dlsym(lib, "cuptiSetThreadIdType"));
  return set != nullptr && set(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) == CUPTI_SUCCESS;
}

uint64_t EnvValue(const char* name, uint64_t fallback, uint64_t low, uint64_t high) {
  const char* v = getenv(name);
  if (!v || !*v) return fallback;
  char* end;
  const unsigned long long n = strtoull(v, &end, 10);
  return (*end || n < low || n > high) ? fallback : n;
}

bool MapPool() {
  // Kineto's buffers are 4 MiB; 8 of them bound what CUPTI can hold between two drains.
  g_cupti.buffer_bytes = EnvValue(st::kEnvCuptiBufferKb, 4096, 4, 1 << 20) * 1024;
  g_cupti.buffer_count = static_cast<uint32_t>(EnvValue(st::kEnvCuptiBuffers, 8, 1, kMaxBuffers));
  void* p = RawMap(g_cupti.buffer_bytes * g_cupti.buffer_count, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  if (p == MAP_FAILED) return false;
  g_cupti.base = static_cast<uint8_t*>(p);
  return true;
}

// Every kind the cuda activity records. Kinds a CUPTI does not support are skipped; without
// kernels there is nothing to show, which the notice says.
bool EnableKinds() {
  const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_DEVICE,
                                      CUPTI_ACTIVITY_KIND_CONTEXT,
                                      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                      CUPTI_ACTIVITY_KIND_MEMCPY,
                                      CUPTI_ACTIVITY_KIND_MEMCPY2,
                                      CUPTI_ACTIVITY_KIND_MEMSET,
                                      CUPTI_ACTIVITY_KIND_RUNTIME,
                                      CUPTI_ACTIVITY_KIND_DRIVER,
                                      CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                      CUPTI_ACTIVITY_KIND_CUDA_EVENT,
                                      CUPTI_ACTIVITY_KIND_MEMORY2,
                                      CUPTI_ACTIVITY_KIND_OVERHEAD};
  bool kernels = false;
  for (CUpti_ActivityKind k : kinds) {
    const CUptiResult r = g_cupti.api.Enable(k);
    if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) kernels = r == CUPTI_SUCCESS;
  }
  return kernels;
}

// Registered once per image, and inherited by a forked child (FlushGpuAtExit checks the pid).
bool g_atexit_registered = false;
void FlushAtExit() {
  FlushGpuAtExit();
}

}  // namespace

// --- the driver's entry point ---

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (!g.active || !g.cuda) return 1;
  bool expected = false;
  if (!g_cupti.injected.compare_exchange_strong(expected, true)) return 1;  // once per image
  void* lib = OpenCupti();
  if (lib == nullptr) {
    if (g_loaded_cupti[0] != '\0') {
      SetNotice(
          "cuda: the workload loaded its own libcupti (%s), which profsh cannot open by its "
          "name (another link namespace); a second CUPTI cannot share the process: GPU activity "
          "not recorded",
          g_loaded_cupti);
      return 1;
    }
    const char* named = getenv(st::kEnvCupti);
    const bool given = named && *named;
    const char* why = given ? dlerror() : nullptr;
    SetNotice("cuda: libcupti could not be loaded (%s%s%s); GPU activity not recorded",
              given ? named : "not found beside the CUDA toolkit; name it with --cupti",
              given ? ": " : "", why ? why : "");
    return 1;
  }
  if (!ResolveApi(lib)) {
    SetNotice(
        "cuda: the libcupti loaded lacks %s (CUPTI 13's activity API)%s; GPU activity not recorded",
        g_missing_entry);
    return 1;
  }
  uint32_t version = 0;
  if (g_cupti.api.GetVersion(&version) != CUPTI_SUCCESS || version < kMinCuptiVersion ||
      version >= kEndCuptiVersion) {
    char v[32];
    snprintf(v, sizeof v, "%u", version);
    if (g_loaded_cupti[0] != '\0') {
      SetNotice(
          "cuda: the workload loaded its own libcupti (%s), of CUPTI API version %s; profsh "
          "needs 13.x (CUDA 13's record layouts) and a second CUPTI cannot share the process "
          "(for torch's CUDA 12 wheels: %s); GPU activity not recorded",
          g_loaded_cupti, v, "use torch.profiler's CUDA activity, or a CUDA 13 build of torch");
      return 1;
    }
    SetNotice(
        "cuda: CUPTI API version %s, profsh needs %s to %s (CUDA 13's record layouts); GPU "
        "activity not recorded",
        v, "130000", "139999");
    return 1;
  }
  CUpti_SubscriberHandle subscriber;
  const CUptiResult sub = g_cupti.api.Subscribe(&subscriber, IgnoreCallback, nullptr);
  if (sub == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    SetNotice(
        "cuda: CUPTI is already used by another tool (torch.profiler, nsys, ncu, "
        "compute-sanitizer); GPU activity not recorded by profsh%s%s",
        "", "");
    return 1;
  }
  if (sub != CUPTI_SUCCESS) {
    SetNotice("cuda: cuptiSubscribe failed (%s); GPU activity not recorded", ResultText(sub));
    return 1;
  }
  if (!MapPool()) {
    SetNotice("cuda: no memory for CUPTI's buffers; GPU activity not recorded");
    g_cupti.api.Unsubscribe(subscriber);  // CUPTI stays free for the user's own profiler
    return 1;
  }
  // The clock first: records of kinds enabled before it would carry CUPTI's own.
  g_cupti.api.RegisterTimestampCallback(CollectorTicks);
  const CUptiResult reg = g_cupti.api.RegisterCallbacks(RequestBuffer, CompleteBuffer);
  if (reg != CUPTI_SUCCESS) {
    SetNotice("cuda: cuptiActivityRegisterCallbacks failed (%s); GPU activity not recorded",
              ResultText(reg));
    g_cupti.api.Unsubscribe(subscriber);
    return 1;
  }
  g_cupti.os_thread_ids = OsThreadIds(lib);
  if (!EnableKinds())
    SetNotice("cuda: CUPTI refused kernel records (CONCURRENT_KERNEL); only API calls recorded");
  g_cupti.enabled.store(true, std::memory_order_release);
  // After libcupti was loaded, so that exit() runs this before libcupti's destructors (and
  // libcuda's, loaded even earlier): the collector's own destructor comes after them.
  if (!g_atexit_registered) g_atexit_registered = atexit(FlushAtExit) == 0;
  return 1;
}

// --- the drain's side ---

namespace {

uint32_t Intern(const char* text) {
  if (text == nullptr) return 0;
  return registry().strings().Intern(text, strlen(text)) & kIdMask;
}

uint32_t ApiName(bool runtime, uint32_t cbid) {
  uint32_t* cached = cbid < 1024 ? &g_cupti.api_names[runtime][cbid] : nullptr;
  if (cached && *cached) return *cached;
  const char* name = nullptr;
  g_cupti.api.GetCallbackName(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
                              cbid, &name);
  char text[128];
  if (name == nullptr) {
    snprintf(text, sizeof text, "%s_%u", runtime ? "cudaRuntime" : "cuDriver", cbid);
  } else {
    snprintf(text, sizeof text, "%s", name);
    // The runtime's names carry the version they came in ("cudaLaunchKernel_v7000"); Kineto's
    // traces, and so the analyses, name the call without it.
    char* v = strrchr(text, '_');
    if (runtime && v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9') *v = '\0';
  }
  const uint32_t id = Intern(text);
  if (cached) *cached = id;
  return id;
}

// The fallback when CUPTI refused CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM: an API record's thread
// as the stream names threads (the OS thread id). CUPTI then reports the low 32 bits of
// pthread_self() (or, in some versions, the OS id): a thread
// the collector knows is found by either; others keep CUPTI's number. Cached: a workload makes
// its calls from a few threads. The cache is emptied every drain round, so a thread that claims
// its slot after its first CUDA call is found from the next round on.
uint32_t g_thread_round = 1;
uint64_t OsThreadOf(uint32_t cupti_thread) {
  static uint32_t cache_key[64], cache_round[64];
  static int64_t cache_tid[64];
  const uint32_t slot = (cupti_thread * 2654435761u) >> 26;
  if (cache_round[slot] == g_thread_round && cache_key[slot] == cupti_thread)
    return static_cast<uint64_t>(cache_tid[slot]);
  int64_t found = cupti_thread;
  for (uint32_t i = 0; i < g.slot_count; ++i) {
    // Free slots too: they keep their last thread's ids until reused, and the final flush's
    // records are mostly of threads that have exited.
    const ThreadSlot& s = g.slots[i];
    const int64_t tid = s.tid.load(std::memory_order_relaxed);
    if (tid == static_cast<int64_t>(cupti_thread)) break;
    if (s.pthread_low.load(std::memory_order_relaxed) == cupti_thread) {
      found = tid;
      break;
    }
  }
  cache_key[slot] = cupti_thread;
  cache_tid[slot] = found;
  cache_round[slot] = g_thread_round;
  return static_cast<uint64_t>(found);
}

// CUPTI's activity members and the record fields they fill, each pair listed once: a record
// built from an activity takes every listed field both have (FromActivity), so a kind's case
// below writes only what is computed (interned names, thread ids, the API's kind). A new record
// field that CUPTI names in its activities is one line in gpu_records.h and one here.
#define PROFSH_CUPTI_MEMBERS(F)                             \
  F(start, start)                                           \
  F(end, end)                                               \
  F(device, deviceId)                                       \
  F(context, contextId)                                     \
  F(stream, streamId)                                       \
  F(correlation, correlationId)                             \
  F(grid_x, gridX)                                          \
  F(grid_y, gridY)                                          \
  F(grid_z, gridZ)                                          \
  F(block_x, blockX)                                        \
  F(block_y, blockY)                                        \
  F(block_z, blockZ)                                        \
  F(registers_per_thread, registersPerThread)               \
  F(static_shared, staticSharedMemory)                      \
  F(dynamic_shared, dynamicSharedMemory)                    \
  F(graph, graphId)                                         \
  F(graph_node, graphNodeId)                                \
  F(bytes, bytes)                                           \
  F(copy_kind, copyKind)                                    \
  F(src_kind, srcKind)                                      \
  F(dst_kind, dstKind)                                      \
  F(value, value)                                           \
  F(memory_kind, memoryKind)                                \
  F(cbid, cbid)                                             \
  F(return_value, returnValue)                              \
  F(type, type)                                             \
  F(event, cudaEventId)                                     \
  F(event, eventId)                                         \
  F(time, timestamp)                                        \
  F(operation, memoryOperationType)                         \
  F(address, address)                                       \
  F(overhead_kind, overheadKind)                            \
  F(object_kind, objectKind)                                \
  F(id, id)                                                 \
  F(sms, numMultiprocessors)                                \
  F(cc_major, computeCapabilityMajor)                       \
  F(cc_minor, computeCapabilityMinor)                       \
  F(global_memory, globalMemorySize)                        \
  F(max_warps_per_sm, maxWarpsPerMultiprocessor)            \
  F(max_blocks_per_sm, maxBlocksPerMultiprocessor)          \
  F(registers_per_sm, maxRegistersPerMultiprocessor)        \
  F(shared_memory_per_sm, maxSharedMemoryPerMultiprocessor) \
  F(max_threads_per_block, maxThreadsPerBlock)              \
  F(null_stream, nullStreamId)

// The CUPTI activity each record is built from (Translate's casts).
#define PROFSH_CUPTI_SOURCES(S)              \
  S(GpuKernel, CUpti_ActivityKernel10)       \
  S(GpuMemcpy, CUpti_ActivityMemcpy6)        \
  S(GpuMemcpy, CUpti_ActivityMemcpyPtoP4)    \
  S(GpuMemset, CUpti_ActivityMemset4)        \
  S(GpuApi, CUpti_ActivityAPI)               \
  S(GpuSync, CUpti_ActivitySynchronization2) \
  S(GpuMemory, CUpti_ActivityMemory4)        \
  S(GpuOverhead, CUpti_ActivityOverhead3)    \
  S(GpuDevice, CUpti_ActivityDevice5)        \
  S(GpuContext, CUpti_ActivityContext3)      \
  S(GpuCudaEvent, CUpti_ActivityCudaEvent2)

// A misspelt field or member would never be copied: each pair listed is copied for some source.
template <typename Probe>
constexpr bool SomeSourceCopies(Probe) {
#define PROFSH_PROBE_SOURCE(Type, Activity) \
  || std::is_invocable_v<Probe, st::Type*, const Activity*>
  return false PROFSH_CUPTI_SOURCES(PROFSH_PROBE_SOURCE);
#undef PROFSH_PROBE_SOURCE
}
#define PROFSH_CUPTI_PAIR_USED(field, member)                                                      \
  static_assert(SomeSourceCopies([](auto* r, auto* a) -> decltype(void(r->field = a->member)) {}), \
                #field " <- " #member ": no GPU record and CUPTI activity have both");
PROFSH_CUPTI_MEMBERS(PROFSH_CUPTI_PAIR_USED)
#undef PROFSH_CUPTI_PAIR_USED

template <typename Record, typename Activity>
Record FromActivity(const Activity* a) {
  Record rec;
#define PROFSH_CUPTI_COPY(field, member)                                        \
  if constexpr (requires(Record r, const Activity* p) { r.field = p->member; }) \
    rec.field = static_cast<uint64_t>(a->member);
  PROFSH_CUPTI_MEMBERS(PROFSH_CUPTI_COPY)
#undef PROFSH_CUPTI_COPY
  return rec;
}

// A CUPTI thread id as the OS thread (CUPTI reports pthread ids unless told otherwise).
uint64_t OsThread(uint64_t cupti_thread) {
  return g_cupti.os_thread_ids ? cupti_thread : OsThreadOf(cupti_thread);
}

// One CUPTI record as a stream record; false for kinds not kept.
bool Translate(const CUpti_Activity* a, st::GpuRecord* r) {
  switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(a);
      auto rec = FromActivity<st::GpuKernel>(k);
      rec.name = Intern(k->name);
      rec.PackInto(r);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto rec = FromActivity<st::GpuMemcpy>(reinterpret_cast<const CUpti_ActivityMemcpy6*>(a));
      rec.src_device = rec.dst_device = rec.device;
      rec.PackInto(r);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(a);
      auto rec = FromActivity<st::GpuMemcpy>(m);
      rec.src_device = m->srcDeviceId;
      rec.dst_device = m->dstDeviceId;
      rec.PackInto(r);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET:
      FromActivity<st::GpuMemset>(reinterpret_cast<const CUpti_ActivityMemset4*>(a)).PackInto(r);
      return true;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* c = reinterpret_cast<const CUpti_ActivityAPI*>(a);
      const bool runtime = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      auto rec = FromActivity<st::GpuApi>(c);
      rec.tid = OsThread(c->threadId);
      rec.name = ApiName(runtime, c->cbid);
      rec.api = runtime ? st::kGpuApiRuntime : st::kGpuApiDriver;
      rec.PackInto(r);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      FromActivity<st::GpuSync>(reinterpret_cast<const CUpti_ActivitySynchronization2*>(a))
          .PackInto(r);
      return true;
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
      FromActivity<st::GpuCudaEvent>(reinterpret_cast<const CUpti_ActivityCudaEvent2*>(a))
          .PackInto(r);
      return true;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      FromActivity<st::GpuMemory>(reinterpret_cast<const CUpti_ActivityMemory4*>(a)).PackInto(r);
      return true;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(a);
      // CUPTI allocates the details of some kinds (a full command buffer) and leaves freeing
      // them to the client: kept, they would leak in the workload for every such record.
      free(o->overheadData);
      auto rec = FromActivity<st::GpuOverhead>(o);
      if (o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
        rec.thread = OsThread(o->objectId.pt.threadId);
      rec.PackInto(r);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(a);
      auto rec = FromActivity<st::GpuDevice>(d);
      rec.name = Intern(d->name);
      rec.PackInto(r);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      FromActivity<st::GpuContext>(reinterpret_cast<const CUpti_ActivityContext3*>(a)).PackInto(r);
      return true;
    default:
      return false;
  }
}

// Device work (or CUPTI's own overhead) whose start or end CUPTI did not know
// (CUPTI_TIMESTAMP_UNKNOWN, 0) or that ends before it starts: it would be drawn at the far past or
// with a negative length; skipped and counted instead.
bool ValidTimes(const st::GpuRecord& r) {
  bool valid = true;
  st::VisitGpuRecord(r, [&](const auto& rec) {
    using Record = std::decay_t<decltype(rec)>;
    if constexpr (st::DeviceWorkGpuRecord<Record> || std::is_same_v<Record, st::GpuOverhead>)
      valid = rec.start != 0 && rec.end != 0 && rec.end >= rec.start;
  });
  return valid;
}

void EncodeBuffer(PoolBuffer& b, uint8_t* data, BlockBuffer& events) {
  st::GpuBlockWriter<BlockBuffer> writer(events);
  writer.Begin();
  CUpti_Activity* record = nullptr;
  st::GpuRecord out;
  while (g_cupti.api.GetNextRecord(data, b.valid, &record) == CUPTI_SUCCESS) {
    if (!Translate(record, &out)) {
      ++g_cupti.kinds_ignored;
    } else if (!ValidTimes(out)) {
      ++g_cupti.untimed;
    } else if (!writer.Add(out)) {
      ++g_cupti.unwritten;
    }
  }
  writer.End();
}

}  // namespace

void StopGpuActivity(bool for_exec) {
  const bool was_on = g_cupti.enabled.exchange(false, std::memory_order_acq_rel);
  g_cupti.paused_for_exec = for_exec && was_on;
}

bool GpuActivityOn() {
  return g_cupti.enabled.load(std::memory_order_acquire);
}

void ResumeGpuActivityAfterFailedExec() {
  if (!g_cupti.paused_for_exec) return;
  g_cupti.paused_for_exec = false;
  g_cupti.enabled.store(true, std::memory_order_release);
}

void DrainGpuActivity(BlockBuffer& metadata, BlockBuffer& events, GpuFlush flush) {
  if (g_cupti.notice_ready.load(std::memory_order_acquire) && !g_cupti.notice_written) {
    st::AppendBlockTo(metadata, st::NoticeBlock{std::string_view(g_cupti.notice)});
    g_cupti.notice_written = true;
  }
  if (!g_cupti.enabled.load(std::memory_order_acquire)) return;
  ++g_thread_round;
  // Completed buffers are handed back here (or on CUPTI's threads, at any time): the callback
  // only marks them, so calling it under the stream's lock cannot deadlock.
  if (flush != kGpuFlushCompleteOnly)
    g_cupti.api.FlushAll(flush == kGpuFlushForced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  uint32_t ready[kMaxBuffers];
  uint32_t n = 0;
  for (uint32_t i = 0; i < g_cupti.buffer_count; ++i) {
    if (g_cupti.buffers[i].state.load(std::memory_order_acquire) == kBufferComplete) ready[n++] = i;
  }
  for (uint32_t i = 1; i < n; ++i) {  // a handful: insertion sort by completion order
    for (uint32_t j = i;
         j > 0 && g_cupti.buffers[ready[j]].order < g_cupti.buffers[ready[j - 1]].order; --j) {
      const uint32_t t = ready[j];
      ready[j] = ready[j - 1];
      ready[j - 1] = t;
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    PoolBuffer& b = g_cupti.buffers[ready[i]];
    EncodeBuffer(b, g_cupti.base + ready[i] * g_cupti.buffer_bytes, events);
    b.state.store(kBufferFree, std::memory_order_release);
  }
  size_t dropped = 0;
  if (flush != kGpuFlushCompleteOnly &&
      g_cupti.api.GetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS)
    g_cupti.cupti_dropped += dropped;
  const st::GpuDrops now{.cupti_dropped = g_cupti.cupti_dropped,
                         .buffers_refused = g_cupti.refused.load(std::memory_order_relaxed),
                         .kinds_ignored = g_cupti.kinds_ignored,
                         .untimed = g_cupti.untimed,
                         .unwritten = g_cupti.unwritten};
  if (memcmp(&now, &g_cupti.reported, sizeof now) != 0) {
    st::GpuBlockWriter<BlockBuffer> writer(events);
    writer.Begin();
    st::GpuRecord r;
    now.PackInto(&r);
    // Not written: the counts go again next round (they are totals).
    if (writer.Add(r)) g_cupti.reported = now;
    writer.End();
  }
}

void ResetGpuActivityAfterFork() {
  // CUPTI does not follow a fork: the child's driver injects again if it initialises CUDA.
  g_cupti.enabled.store(false, std::memory_order_relaxed);
  g_cupti.paused_for_exec = false;  // a failed exec in the child must not turn it on
  g_cupti.os_thread_ids = false;
  g_cupti.injected.store(false, std::memory_order_relaxed);
  g_cupti.notice_written = false;
  g_cupti.notice_ready.store(false, std::memory_order_relaxed);
  g_cupti.reported = {};
  g_cupti.cupti_dropped = g_cupti.kinds_ignored = g_cupti.untimed = g_cupti.unwritten = 0;
  g_cupti.refused.store(0, std::memory_order_relaxed);
}

}  // namespace profsh::runtime
