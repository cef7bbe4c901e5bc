// A test double of the CUDA driver (libcuda.so.1), built from the CUDA 13 headers. cuInit loads
// CUDA_INJECTION64_PATH and calls its InitializeInjection, as the real driver does; the calls a
// workload makes then generate the activity records CUPTI would (through the test CUPTI's
// fakecupti_record, when a tool loaded it): an API record per call, and the device work on a
// simulated GPU, two devices whose streams run their work back to back at known durations
// (a kernel takes 1 µs per block of its grid's x dimension; a copy or set 1 ns per 4 bytes).
// Synchronisations wait, in real time, until the simulated work they wait for is done.
//
// Besides the driver's calls it exports what a test needs and the real API has no single call
// for: a runtime-API launch (fakecuda_runtime_launch), a copy of any kind (fakecuda_copy), and a
// graph of kernel nodes (fakecuda_graph).
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr int kDevices = 2;
constexpr uint32_t kNullStream = 7;

struct Function {
  std::string name;
  uint32_t registers = 32;
  uint32_t static_shared = 1024;
};

struct Graph {
  uint32_t id;
  std::vector<Function*> nodes;
};

struct StreamInfo {
  int device = 0;
  uint64_t free_at = 0;  // simulated: when the stream's last work ends
};

struct Driver {
  std::mutex mutex;
  bool initialised = false;
  void (*record)(const void*) = nullptr;
  uint64_t (*now)() = nullptr;
  uint64_t (*duration)(uint64_t) = nullptr;
  int (*os_thread_ids)() = nullptr;
  std::atomic<uint32_t> correlation{0};
  std::map<uint32_t, StreamInfo> streams;  // id -> stream
  uint32_t next_stream = 13;
  std::map<uint64_t, uint64_t> allocations;  // address -> bytes
  uint64_t next_address = 0x7f0000000000ull;
};

Driver& D() {
  static Driver d;
  return d;
}

thread_local int t_device = 0;

uint64_t Now() {
  Driver& d = D();
  if (d.now) return d.now();
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// CUPTI's API records name a thread by the low 32 bits of pthread_self(), or by its OS id once
// a tool asked for CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM (the test CUPTI says which).
uint32_t Tid() {
  const bool os_ids = D().os_thread_ids && D().os_thread_ids();
  return os_ids ? static_cast<uint32_t>(syscall(SYS_gettid))
                : static_cast<uint32_t>(pthread_self());
}

void Emit(const void* record) {
  if (D().record) D().record(record);
}

// The test CUPTI, if a tool loaded it (the driver never loads CUPTI itself). A copy the
// workload loaded first (FAKE_CUDA_LOAD_CUPTI) is the one that gets the records, as the CUPTI
// a program brought (torch's wheels) is the one attached to its driver.
void FindCupti() {
  Driver& d = D();
  const char* own = getenv("FAKE_CUDA_LOAD_CUPTI");
  const char* path = own && *own ? own : getenv("PROFSH_CUPTI");
  void* lib = dlopen(path && *path ? path : "libcupti.so", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return;
  d.record = reinterpret_cast<void (*)(const void*)>(dlsym(lib, "fakecupti_record"));
  d.now = reinterpret_cast<uint64_t (*)()>(dlsym(lib, "fakecupti_now"));
  d.duration = reinterpret_cast<uint64_t (*)(uint64_t)>(dlsym(lib, "fakecupti_duration"));
  d.os_thread_ids = reinterpret_cast<int (*)()>(dlsym(lib, "fakecupti_os_thread_ids"));
}

uint32_t StreamId(CUstream s) {
  return s == nullptr ? kNullStream : static_cast<uint32_t>(reinterpret_cast<uintptr_t>(s));
}

StreamInfo& StreamOf(uint32_t id, int device) {
  auto [it, added] = D().streams.try_emplace(id * 16 + static_cast<uint32_t>(device));
  it->second.device = device;
  return it->second;
}

// Simulated device work on `stream`: starts when the stream is free and the launch is done;
// `duration` is in ns, the times on CUPTI's clock.
void Schedule(uint32_t stream, uint64_t launched, uint64_t duration, uint64_t* start,
              uint64_t* end) {
  Driver& d = D();
  std::lock_guard<std::mutex> lock(d.mutex);
  StreamInfo& s = StreamOf(stream, t_device);
  auto on_clock = [&](uint64_t ns) { return d.duration ? d.duration(ns) : ns; };
  *start = std::max(s.free_at, launched + on_clock(500));
  *end = *start + on_clock(duration);
  s.free_at = *end;
}

void Api(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint32_t correlation) {
  CUpti_ActivityAPI a{};
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = Now();
  a.processId = static_cast<uint32_t>(getpid());
  a.threadId = Tid();
  a.correlationId = correlation;
  Emit(&a);
}

// CUPTI's own time, as CUPTI reports it: `details` is memory the client must free (CUPTI 13
// allocates it for some kinds); `timed` false gives both times 0 (not collected).
void Overhead(CUpti_ActivityOverheadKind kind, CUpti_ActivityObjectKind object, bool details,
              bool timed = true) {
  Driver& d = D();
  CUpti_ActivityOverhead3 o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = kind;
  o.objectKind = object;
  o.objectId.pt.processId = static_cast<uint32_t>(getpid());
  if (object == CUPTI_ACTIVITY_OBJECT_THREAD) o.objectId.pt.threadId = Tid();
  if (timed) {
    o.start = Now();
    o.end = o.start + (d.duration ? d.duration(5000) : 5000);
  }
  o.overheadData = details && d.record ? malloc(64) : nullptr;
  Emit(&o);
}

void Kernel(const Function& f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
            unsigned bz, unsigned shared, CUstream stream, uint32_t correlation, uint64_t launched,
            uint32_t graph = 0, uint64_t node = 0) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.registersPerThread = static_cast<uint16_t>(f.registers);
  k.deviceId = static_cast<uint32_t>(t_device);
  k.contextId = static_cast<uint32_t>(t_device + 1);
  k.streamId = StreamId(stream);
  k.gridX = static_cast<int32_t>(gx);
  k.gridY = static_cast<int32_t>(gy);
  k.gridZ = static_cast<int32_t>(gz);
  k.blockX = static_cast<int32_t>(bx);
  k.blockY = static_cast<int32_t>(by);
  k.blockZ = static_cast<int32_t>(bz);
  k.staticSharedMemory = static_cast<int32_t>(f.static_shared);
  k.dynamicSharedMemory = static_cast<int32_t>(shared);
  k.correlationId = correlation;
  k.name = f.name.c_str();
  k.graphId = graph;
  k.graphNodeId = node;
  Schedule(k.streamId, launched, uint64_t{1000} * gx, &k.start, &k.end);
  k.completed = k.end;
  Emit(&k);
}

void Copy(CUpti_ActivityMemcpyKind kind, size_t bytes, CUstream stream, uint32_t correlation,
          uint64_t launched, int src_device = -1, int dst_device = -1) {
  uint64_t start, end;
  Schedule(StreamId(stream), launched, bytes / 4, &start, &end);
  if (kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP) {
    CUpti_ActivityMemcpyPtoP4 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    m.copyKind = kind;
    m.srcKind = m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = bytes;
    m.start = start;
    m.end = end;
    m.deviceId = static_cast<uint32_t>(t_device);
    m.contextId = static_cast<uint32_t>(t_device + 1);
    m.streamId = StreamId(stream);
    m.srcDeviceId = static_cast<uint32_t>(src_device);
    m.dstDeviceId = static_cast<uint32_t>(dst_device);
    m.correlationId = correlation;
    Emit(&m);
    return;
  }
  // Host memory is pageable here, as a plain malloc'd buffer is.
  const uint8_t host = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, dev = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                array = CUPTI_ACTIVITY_MEMORY_KIND_ARRAY;
  static const uint8_t ends[][2] = {{0, 0},        {host, dev},    {dev, host},  {host, array},
                                    {array, host}, {array, array}, {array, dev}, {dev, array},
                                    {dev, dev},    {host, host}};
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = kind;
  if (kind < 10) {
    m.srcKind = ends[kind][0];
    m.dstKind = ends[kind][1];
  }
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.deviceId = static_cast<uint32_t>(t_device);
  m.contextId = static_cast<uint32_t>(t_device + 1);
  m.streamId = StreamId(stream);
  m.correlationId = correlation;
  Emit(&m);
}

void Devices() {
  for (int i = 0; i < kDevices; ++i) {
    CUpti_ActivityDevice5 d{};
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = static_cast<uint32_t>(i);
    d.name = "Test GPU (profsh double)";
    d.globalMemorySize = uint64_t{80} << 30;
    d.numMultiprocessors = 132;
    d.maxWarpsPerMultiprocessor = 64;
    d.maxBlocksPerMultiprocessor = 32;
    d.maxRegistersPerMultiprocessor = 65536;
    d.maxSharedMemoryPerMultiprocessor = 233472;
    d.maxThreadsPerBlock = 1024;
    d.computeCapabilityMajor = 9;
    d.computeCapabilityMinor = 0;
    Emit(&d);
    CUpti_ActivityContext3 c{};
    c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    c.contextId = static_cast<uint32_t>(i + 1);
    c.deviceId = static_cast<uint32_t>(i);
    c.nullStreamId = kNullStream;
    Emit(&c);
  }
}

void WaitUntil(uint64_t t) {
  while (Now() < t) {
    timespec ts{0, 20000};
    nanosleep(&ts, nullptr);
  }
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUresult CUDAAPI cuInit(unsigned int) {
  Driver& d = D();
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    if (d.initialised) return CUDA_SUCCESS;
    d.initialised = true;
  }
  // FAKE_CUDA_LOAD_CUPTI=PATH: the program loaded a libcupti of its own before cuInit.
  if (const char* own = getenv("FAKE_CUDA_LOAD_CUPTI"); own && *own)
    dlopen(own, RTLD_NOW | RTLD_GLOBAL);
  const char* path = getenv("CUDA_INJECTION64_PATH");
  if (path && *path && strcmp(path, "none") != 0) {
    if (void* lib = dlopen(path, RTLD_NOW)) {
      auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
      if (init) init();
    }
  }
  FindCupti();
  Devices();
  // CUPTI instruments the module on the initialising thread, and takes resources for the process.
  Overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION, CUPTI_ACTIVITY_OBJECT_THREAD, true);
  Overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE, CUPTI_ACTIVITY_OBJECT_PROCESS, false);
  const char* untimed = getenv("FAKE_CUPTI_SCENARIO");
  if (untimed && strstr(untimed, "untimed"))
    Overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, CUPTI_ACTIVITY_OBJECT_PROCESS, false,
             false);
  // FAKE_CUPTI_SCENARIO "user-subscribes": the workload then subscribes to CUPTI itself, as a
  // script running torch.profiler would, and says whether CUPTI let it.
  const char* scenario = getenv("FAKE_CUPTI_SCENARIO");
  if (scenario && strstr(scenario, "user-subscribes")) {
    const char* cupti = getenv("PROFSH_CUPTI");
    void* lib = dlopen(cupti && *cupti ? cupti : "libcupti.so", RTLD_NOW | RTLD_NOLOAD);
    auto subscribe =
        lib ? reinterpret_cast<CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*)>(
                  dlsym(lib, "cuptiSubscribe"))
            : nullptr;
    CUpti_SubscriberHandle handle;
    fprintf(stderr, "the workload's own CUPTI subscriber: %s\n",
            subscribe && subscribe(&handle, nullptr, nullptr) == CUPTI_SUCCESS ? "accepted"
                                                                               : "refused");
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal < 0 || ordinal >= kDevices) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device) {
  *ctx = reinterpret_cast<CUcontext>(static_cast<uintptr_t>(device + 1));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  t_device = static_cast<int>(reinterpret_cast<uintptr_t>(ctx)) - 1;
  return CUDA_SUCCESS;
}

// A call that launches no device work: an API record only.
CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  *device = t_device;
  Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice, start, c);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream* stream, unsigned int) {
  std::lock_guard<std::mutex> lock(D().mutex);
  *stream = reinterpret_cast<CUstream>(static_cast<uintptr_t>(D().next_stream++));
  return CUDA_SUCCESS;
}

// The module is ignored: the function is named by `name`, with 32 registers a thread and 1 KiB
// of static shared memory.
CUresult CUDAAPI cuModuleGetFunction(CUfunction* f, CUmodule, const char* name) {
  *f = reinterpret_cast<CUfunction>(new Function{name});
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                unsigned by, unsigned bz, unsigned shared, CUstream stream, void**,
                                void**) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, start, c);
  Kernel(*reinterpret_cast<Function*>(f), gx, gy, gz, bx, by, bz, shared, stream, c, Now());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr* ptr, size_t bytes) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  {
    std::lock_guard<std::mutex> lock(D().mutex);
    *ptr = D().next_address;
    D().allocations[*ptr] = bytes;
    D().next_address += (bytes + 0xfff) & ~uint64_t{0xfff};
  }
  Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, start, c);
  CUpti_ActivityMemory4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.correlationId = c;
  m.address = *ptr;
  m.bytes = bytes;
  m.timestamp = Now();
  m.processId = static_cast<uint32_t>(getpid());
  m.deviceId = static_cast<uint32_t>(t_device);
  m.contextId = static_cast<uint32_t>(t_device + 1);
  Emit(&m);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr ptr) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  uint64_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(D().mutex);
    auto it = D().allocations.find(ptr);
    if (it == D().allocations.end()) return CUDA_ERROR_INVALID_VALUE;
    bytes = it->second;
    D().allocations.erase(it);
  }
  Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, start, c);
  CUpti_ActivityMemory4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.correlationId = c;
  m.address = ptr;
  m.bytes = bytes;
  m.timestamp = Now();
  m.processId = static_cast<uint32_t>(getpid());
  m.deviceId = static_cast<uint32_t>(t_device);
  m.contextId = static_cast<uint32_t>(t_device + 1);
  Emit(&m);
  return CUDA_SUCCESS;
}

static CUresult SyncCopy(uint32_t cbid, CUpti_ActivityMemcpyKind kind, size_t bytes) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  Copy(kind, bytes, nullptr, c, start);
  uint64_t done;
  {
    std::lock_guard<std::mutex> lock(D().mutex);
    done = StreamOf(kNullStream, t_device).free_at;
  }
  WaitUntil(done);  // a synchronous copy returns once it is done
  Api(CUPTI_ACTIVITY_KIND_DRIVER, cbid, start, c);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr, const void*, size_t bytes) {
  return SyncCopy(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, bytes);
}
CUresult CUDAAPI cuMemcpyDtoH(void*, CUdeviceptr, size_t bytes) {
  return SyncCopy(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, bytes);
}
CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr, CUdeviceptr, size_t bytes) {
  return SyncCopy(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, bytes);
}

CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr, CUcontext dst, CUdeviceptr, CUcontext src,
                              size_t bytes) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  Copy(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, bytes, nullptr, c, start,
       static_cast<int>(reinterpret_cast<uintptr_t>(src)) - 1,
       static_cast<int>(reinterpret_cast<uintptr_t>(dst)) - 1);
  Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer, start, c);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr, unsigned char value, size_t bytes) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  CUpti_ActivityMemset4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.value = value;
  m.bytes = bytes;
  Schedule(kNullStream, start, bytes / 4, &m.start, &m.end);
  m.deviceId = static_cast<uint32_t>(t_device);
  m.contextId = static_cast<uint32_t>(t_device + 1);
  m.streamId = kNullStream;
  m.correlationId = c;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  Emit(&m);
  Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, start, c);
  return CUDA_SUCCESS;
}

static void Sync(uint32_t cbid, CUpti_ActivitySynchronizationType type, uint32_t stream) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  uint64_t done = 0;
  {
    std::lock_guard<std::mutex> lock(D().mutex);
    for (auto& [key, s] : D().streams) {
      if (s.device == t_device && (stream == 0 || key / 16 == stream))
        done = std::max(done, s.free_at);
    }
  }
  WaitUntil(done);
  CUpti_ActivitySynchronization2 s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = type;
  s.start = start;
  s.end = Now();
  s.correlationId = c;
  s.contextId = static_cast<uint32_t>(t_device + 1);
  s.streamId = stream == 0 ? kNullStream : stream;
  Emit(&s);
  Api(CUPTI_ACTIVITY_KIND_DRIVER, cbid, start, c);
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream) {
  Sync(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
       CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, StreamId(stream));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void) {
  Sync(CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
       CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 0);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, start, c);
  const Graph& g = *reinterpret_cast<Graph*>(exec);
  const uint64_t launched = Now();
  for (size_t i = 0; i < g.nodes.size(); ++i)
    Kernel(*g.nodes[i], 2, 1, 1, 128, 1, 1, 0, stream, c, launched, g.id, i + 1);
  return CUDA_SUCCESS;
}

// --- what the tests need beyond the driver's calls ---

// cudaEventRecord, cudaStreamWaitEvent and cudaEventSynchronize as the runtime records them:
// the event's record (CUPTI's CUDA_EVENT kind) and the syncs that name the event. A stream
// that waits for an event starts its next work after the work recorded before the event.
namespace {
std::map<uint32_t, uint64_t> g_event_ready;  // event -> when its recorded work ends (D().mutex)

void EventSync(CUpti_ActivitySynchronizationType type, uint32_t stream, uint32_t event,
               uint64_t start, uint64_t end, uint32_t correlation) {
  CUpti_ActivitySynchronization2 s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = type;
  s.start = start;
  s.end = end;
  s.correlationId = correlation;
  s.contextId = static_cast<uint32_t>(t_device + 1);
  s.streamId = stream;
  s.cudaEventId = event;
  Emit(&s);
}
}  // namespace

__attribute__((visibility("default"))) void fakecuda_runtime_event_record(uint32_t event,
                                                                          CUstream stream) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  {
    std::lock_guard<std::mutex> lock(D().mutex);
    g_event_ready[event] = StreamOf(StreamId(stream), t_device).free_at;
  }
  CUpti_ActivityCudaEvent2 e{};
  e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  e.correlationId = c;
  e.contextId = static_cast<uint32_t>(t_device + 1);
  e.streamId = StreamId(stream);
  e.eventId = event;
  e.deviceId = static_cast<uint32_t>(t_device);
  Emit(&e);
  Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, start, c);
}

__attribute__((visibility("default"))) void fakecuda_runtime_stream_wait_event(CUstream stream,
                                                                               uint32_t event) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  {
    std::lock_guard<std::mutex> lock(D().mutex);
    StreamInfo& s = StreamOf(StreamId(stream), t_device);
    s.free_at = std::max(s.free_at, g_event_ready[event]);
  }
  const uint64_t end = Now();
  EventSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, StreamId(stream), event, start,
            end, c);
  Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, start, c);
}

__attribute__((visibility("default"))) void fakecuda_runtime_event_synchronize(uint32_t event) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  uint64_t ready;
  {
    std::lock_guard<std::mutex> lock(D().mutex);
    ready = g_event_ready[event];
  }
  WaitUntil(ready);
  EventSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE,
            CUPTI_SYNCHRONIZATION_INVALID_VALUE, event, start, Now(), c);
  Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, start, c);
}

// cudaLaunchKernel as the runtime records it: a runtime-API record whose correlation the kernel
// carries.
__attribute__((visibility("default"))) void fakecuda_runtime_launch(CUfunction f, unsigned gx,
                                                                    unsigned bx, CUstream stream) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, start, c);
  Kernel(*reinterpret_cast<Function*>(f), gx, 1, 1, bx, 1, 1, 0, stream, c, Now());
}

// An asynchronous copy of any CUpti_ActivityMemcpyKind, recorded under cudaMemcpy.
__attribute__((visibility("default"))) void fakecuda_copy(int kind, size_t bytes, CUstream stream) {
  const uint64_t start = Now();
  const uint32_t c = ++D().correlation;
  Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, start, c);
  Copy(static_cast<CUpti_ActivityMemcpyKind>(kind), bytes, stream, c, Now());
}

// A graph of `nodes` kernel nodes, all `f`, for cuGraphLaunch.
__attribute__((visibility("default"))) CUgraphExec fakecuda_graph(uint32_t id, CUfunction f,
                                                                  int nodes) {
  auto* g = new Graph{id, {}};
  for (int i = 0; i < nodes; ++i) g->nodes.push_back(reinterpret_cast<Function*>(f));
  return reinterpret_cast<CUgraphExec>(g);
}

}  // extern "C"
