// The stream a collected process writes: the one format the injected runtime (writer) and the
// session importer (reader) share. Plain constants and packed headers only, so that the runtime,
// which links nothing of the engine, can include it.
//
// A session folder holds one stream per process image: "<pid>-<n>.pstream" (n counts execs of
// the same pid). A stream is a file header followed by blocks; every block is written with one
// write() by the runtime's drain thread, so a killed process leaves a stream whose last block
// is at worst cut short, and the reader stops there.
//
// Timestamps are raw ticks of the runtime's clock (TSC or CLOCK_MONOTONIC nanoseconds); kClock
// blocks pair ticks with CLOCK_REALTIME so that the reader converts them, as Kineto converts
// its TSC timestamps after the fact.
#pragma once

#include <cstdint>

namespace profsh::stream {

inline constexpr char kMagic[8] = {'P', 'R', 'O', 'F', 'S', 'H', 'S', 'T'};
inline constexpr uint32_t kVersion = 1;
inline constexpr char kFileSuffix[] = ".pstream";

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_size;  // sizeof(FileHeader), for forward compatibility
};
static_assert(sizeof(FileHeader) == 16);

struct BlockHeader {
  uint32_t type;
  uint32_t size;  // payload bytes after this header
};
static_assert(sizeof(BlockHeader) == 8);

// Block payloads. Integers are little-endian; "str" is a varint length and that many bytes.
enum BlockType : uint32_t {
  // i64 pid, i64 ppid, i64 realtime_ns at start, u32 exec_index, u32 clock_kind,
  // str command line (arguments separated by '\0'), str executable, str hostname,
  // varint n, n × (str key, str value): the launcher variables (RANK, LOCAL_RANK, ...)
  kProcess = 1,
  // u64 ticks, i64 monotonic_ns, i64 realtime_ns
  kClock = 2,
  // varint id, str UTF-8 text
  kString = 3,
  // varint slot, i64 tid, str name (empty until named; a later block renames)
  kThread = 4,
  // varint slot, u64 first_ticks, u32 count, events (below)
  kEvents = 5,
  // varint slot, varint dropped_ranges, varint dropped_events, varint unmatched_pops
  // (cumulative per thread slot; the last block of a slot holds its totals)
  kDrops = 6,
  // varint id, u8 source (kSourceNvtx, kSourceItt), str name
  kDomain = 7,
  // varint domain, varint category, str name
  kCategory = 8,
  // varint id, varint domain, u8 value_type, str name
  kCounter = 9,
  // i64 tid, str name: a thread named from another thread (nvtxNameOsThread)
  kOsThreadName = 10,
  // u8 reason (kEnd*): the process image ended normally; nothing follows
  kEnd = 11,
  // str path of the new image: written just before execve (the stream ends here if it worked)
  kExec = 12,
  // the execve above failed; the stream goes on
  kExecFailed = 13,
  // str message: something the runtime wants the user to know (injection refused, ...)
  kNotice = 14,
  // varint events of threads that found no free slot, varint strings refused (table full),
  // varint metadata refused (queue full), varint events after shutdown (cumulative)
  kProcessDrops = 15,
  // u64 ticks, i64 step, u8 action (ProfilerAction): a step began (a marker, profsh_step())
  kStep = 16,
  // u64 ticks, u8 1 (the first capture range opened) or 0 (the last one closed)
  kCapture = 17,
  // u64 ticks, i64 request id, i64 first step: an on-demand request was armed
  kDemand = 18,
  // u64 ticks: the profiler was stopped (recording stays off)
  kStop = 19,
  // u8 flags (kConfig*), 6 × i64 schedule (skip_first, wait, warmup, active, repeat,
  // skip_first_wait), str step marker pattern, str capture range name
  kConfig = 20,
  // CPU samples (activity cpu), in their own file (kSamplesFile), encoded by sample_codec.h:
  kSampleConfig = 21,   // how the samples were taken
  kSampleTask = 22,     // a process or thread began, exec'd, was named or ended
  kSampleMapping = 23,  // an executable mapping of a sampled process
  kSample = 24,         // one sample: thread, time, user registers, a copy of the user stack
  kSampleDrops = 25,    // samples the kernel or the collector could not keep (cumulative)
  // u32 count, count × GPU activity record (GpuRecord in stream_codec.h: u8 kind, varint n,
  // n varints; gpu_records.h lists the kinds and each kind's fields in wire order). Times are
  // the stream's ticks: CUPTI's timestamp callback is the collector's clock.
  kGpuActivity = 26,
  // varint n (at most kMostFrequentNames), n × (varint name id, varint count): the range and
  // mark names (NVTX, ITT, torch's record_function) met most often while a step marker was set
  // and none had matched yet, cumulative; written about once a second until a step comes, so
  // that a run whose marker matches nothing can say which names it could have been
  kNameCounts = 27,
};
inline constexpr uint32_t kMostFrequentNames = 8;

// The CPU samples of a session: written by profsh from perf_event_open's buffers (the samples'
// times are CLOCK_MONOTONIC ns; a kClock block pairs them with CLOCK_REALTIME).
// The collector's timer fallback writes one per process image: cpu-samples-PID-N.psamples.
inline constexpr char kSamplesFile[] = "cpu-samples.psamples";
inline constexpr char kSamplesSuffix[] = ".psamples";

enum ConfigFlags : uint8_t {
  kConfigSchedule = 1,
  kConfigCapture = 2,
  kConfigOnDemand = 4,
  kConfigMarker = 8,
  kConfigCuda = 16,  // the cuda activity is on: GPU records may follow (kGpuActivity)
  // profile_memory is on, but this process's allocations are not recorded: it is neither the
  // command, nor Python, nor linked with torch (a compiler torch.compile runs, a shell tool).
  kConfigMemoryLeftOut = 32,
};

// The control block: a file "control" in the session folder that profsh and every collected
// process map shared. profsh writes requests; each process's drain thread polls them.
inline constexpr char kControlFile[] = "control";
inline constexpr uint64_t kControlMagic = 0x4c52544e43485350ull;  // "PSHCNTRL"
inline constexpr int kControlRequests = 32;
struct ControlRequest {
  uint64_t id;    // 0: empty; written last (release), so the other fields are complete
  int64_t pid;    // the process to record (0: every process)
  int64_t steps;  // how many steps
  uint64_t reserved;
};
struct ControlBlock {
  uint64_t magic;
  uint64_t stop;  // non-zero: stop recording in every process
  ControlRequest requests[kControlRequests];
};

enum EndReason : uint8_t { kEndExit = 1, kEndUnderscoreExit = 2, kEndExec = 3 };
enum Source : uint8_t { kSourceNvtx = 1, kSourceItt = 2 };
// The domain of the Python calls the torch plugin records for the cpu activity
// (profsh_collector_python_call): read back as the Python frames of samples, not as ranges.
inline constexpr char kPythonCallsDomain[] = "profsh.python";
enum ClockKind : uint32_t { kClockTsc = 1, kClockMonotonic = 2 };

// Events in a kEvents block: varint(delta_ticks << 4 | kind), then the kind's fields as
// varints. delta_ticks is from the previous event of the block (the first from first_ticks).
enum EventKind : uint8_t {
  kPush = 0,        // domain, name, attrs
  kPop = 1,         // domain
  kRangeStart = 2,  // range id, domain, name, attrs
  kRangeEnd = 3,    // range id
  kMark = 4,        // domain, name, attrs
  kFrameBegin = 5,  // domain, frame id (0: none)
  kFrameEnd = 6,    // domain, frame id
  kCounterSet = 7,  // counter, varint value: double bits (float types), the value (u64),
                    // zigzag (other integer types)
  kPause = 8,       //
  kResume = 9,      //
  kThreadEnd = 10,  // the thread exited (pthread key destructor)
  kTaskBegin = 11,  // ITT task: domain, name, task id, parent id
  kTaskEnd = 12,    // ITT task end: domain
  kOpBegin = 13,    // a PyTorch operator: name, shapes, dtypes, stack (string ids), zigzag
                    // sequence number, forward thread id, u8 scope (at::RecordScope), flops;
                    // it ends with a kPop of domain 0
  kMemory = 14,     // zigzag bytes (negative: freed), varint address
  kKindCount = 15,
};

// attrs: varint flags, then the fields the flags name, in this order.
enum AttrFlags : uint8_t {
  kAttrCategory = 1 << 0,  // varint category
  kAttrColor = 1 << 1,     // varint ARGB
  kAttrPayload = 1 << 2,   // u8 payload type (NVTX numbering), varint bits (zigzag for signed)
};

// NVTX payload types (nvtxPayloadType_t), kept as numbered there.
enum PayloadType : uint8_t {
  kPayloadU64 = 1,
  kPayloadI64 = 2,
  kPayloadDouble = 3,
  kPayloadU32 = 4,
  kPayloadI32 = 5,
  kPayloadFloat = 6,
};

// Counter value types (ITT's __itt_metadata_type numbering).
enum CounterType : uint8_t {
  kCounterU64 = 1,
  kCounterS64 = 2,
  kCounterU32 = 3,
  kCounterS32 = 4,
  kCounterU16 = 5,
  kCounterS16 = 6,
  kCounterFloat = 7,
  kCounterDouble = 8,
};

// GpuApi's `api` (gpu_records.h).
enum GpuApiKind : uint8_t { kGpuApiDriver = 1, kGpuApiRuntime = 2 };

// Variables the launcher sets for the runtime.
inline constexpr char kEnvSession[] = "PROFSH_SESSION";        // the session folder
inline constexpr char kEnvActivities[] = "PROFSH_ACTIVITIES";  // "nvtx,itt"
inline constexpr char kEnvBufferKb[] = "PROFSH_BUFFER_KB";     // per-thread buffer size
inline constexpr char kEnvDrainMs[] = "PROFSH_DRAIN_MS";       // drain interval
// The flight recorder's bound on the per-thread rings of one process, together (KiB).
inline constexpr char kEnvRingTotalKb[] = "PROFSH_RING_TOTAL_KB";
inline constexpr char kEnvSchedule[] =
    "PROFSH_SCHEDULE";  // "skip_first,wait,warmup,active,repeat,skip_first_wait"
inline constexpr char kEnvStepMarker[] = "PROFSH_STEP_MARKER";  // Lua pattern of step marker names
// Or, instead, a regular expression (ECMAScript, step_regex.h) of step marker names.
inline constexpr char kEnvStepRegex[] = "PROFSH_STEP_REGEX";
inline constexpr char kEnvCaptureRange[] =
    "PROFSH_CAPTURE_RANGE";  // record only inside ranges of this name
inline constexpr char kEnvOnDemand[] = "PROFSH_ON_DEMAND";  // start idle, record on request
// profile_memory: "1" (the command, Python and torch processes) or "all" (every process).
inline constexpr char kEnvProfileMemory[] = "PROFSH_PROFILE_MEMORY";
// The launcher's pid: the process it started (the command) is its child.
inline constexpr char kEnvLauncherPid[] = "PROFSH_LAUNCHER_PID";
// Tests: act as if perf_event_open were denied (the cpu activity's fallback).
inline constexpr char kEnvSampleDenyPerf[] = "PROFSH_SAMPLE_DENY_PERF";
// "rate,stack_bytes": the collector samples its threads on CPU-time timers (perf_event_open
// was denied to profsh).
inline constexpr char kEnvSampleTimer[] = "PROFSH_SAMPLE_TIMER";
inline constexpr char kEnvCupti[] = "PROFSH_CUPTI";  // libcupti to load (cuda activity)
inline constexpr char kEnvCuptiBufferKb[] = "PROFSH_CUPTI_BUFFER_KB";  // one CUPTI buffer
inline constexpr char kEnvCuptiBuffers[] = "PROFSH_CUPTI_BUFFERS";     // buffers in the pool

inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Writes v as a LEB128 varint at p; returns the byte after it. p needs 10 bytes of room.
inline uint8_t* PutVarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

}  // namespace profsh::stream
