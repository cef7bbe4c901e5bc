#include "engine/recording/cpu_sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/stream/sample_codec.h"
#include "engine/stream/stream_format.h"

namespace profsh {

namespace st = stream;

// A growable sink for the codec: Room() makes the bytes, Advance() keeps those written.
struct CpuSampler::Buffer {
  std::vector<uint8_t> bytes;
  size_t used = 0;
  uint8_t* Room(size_t n) {
    if (bytes.size() < used + n) bytes.resize(std::max(bytes.size() * 2, used + n));
    return bytes.data() + used;
  }
  void Advance(size_t n) { used += n; }
  size_t size() const { return used; }
  uint8_t* At(size_t i) { return bytes.data() + i; }
};

namespace {

// perf's register mask for x86-64 user registers: every register but DS, ES, FS and GS, which
// the kernel refuses in 64-bit mode.
constexpr uint64_t kUserRegsMask =
    ((uint64_t{1} << 24) - 1) &
    ~((uint64_t{1} << 12) | (uint64_t{1} << 13) | (uint64_t{1} << 14) | (uint64_t{1} << 15));

int64_t NowNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The highest clock rate of any CPU (cpufreq's cpuinfo_max_freq: hybrid machines differ per
// core), else the fastest "cpu MHz" of /proc/cpuinfo (the current clock on some kernels, so
// the rate may come out above the one asked for), in cycles per second; 0 when neither says.
uint64_t MaxCyclesPerSecond() {
  unsigned long long best_khz = 0;
  for (int cpu = 0; cpu < 4096; ++cpu) {
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", cpu);
    FILE* f = fopen(path, "r");
    if (f == nullptr) break;
    unsigned long long khz = 0;
    if (fscanf(f, "%llu", &khz) == 1 && khz > best_khz) best_khz = khz;
    fclose(f);
  }
  if (best_khz > 0) return best_khz * 1000;
  double best_mhz = 0;
  if (FILE* f = fopen("/proc/cpuinfo", "r")) {
    char line[256];
    while (fgets(line, sizeof line, f)) {
      double mhz = 0;
      if (sscanf(line, "cpu MHz : %lf", &mhz) == 1 && mhz > best_mhz) best_mhz = mhz;
    }
    fclose(f);
  }
  return static_cast<uint64_t>(best_mhz * 1e6);
}

// Either event samples at a fixed period, so that every sample stands for the same amount and
// counts of samples are shares: the CPU clock's 1e9 / rate nanoseconds of CPU time, or the
// cycles of 1 / rate seconds at the CPU's highest clock (`cycles_period`, 0 for the CPU clock).
// Cycles in perf's frequency mode would have the kernel retune the period sample by sample,
// and counts would not be shares unless each sample carried its period.
perf_event_attr MakeAttr(const CpuSamplerOptions& o, uint64_t cycles_period) {
  perf_event_attr a{};
  a.size = sizeof a;
  if (cycles_period > 0) {
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.sample_period = cycles_period;
  } else {
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = 1000000000ull / o.rate_hz;
  }
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
                  PERF_SAMPLE_STACK_USER;
  a.sample_regs_user = kUserRegsMask;
  a.sample_stack_user = o.stack_bytes;
  a.disabled = 1;
  a.inherit = 1;
  a.enable_on_exec = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  a.mmap = 1;
  a.mmap2 = 1;
  a.comm = 1;
  a.comm_exec = 1;
  a.task = 1;
  a.sample_id_all = 1;
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC;
  a.watermark = 1;
  return a;
}

int PerfEventOpen(perf_event_attr* a, int pid, int cpu) {
  return static_cast<int>(syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

template <typename T>
T Read(const uint8_t*& p, const uint8_t* end, bool* ok) {
  T v{};
  if (end - p < static_cast<ptrdiff_t>(sizeof(T))) {
    *ok = false;
    return v;
  }
  std::memcpy(&v, p, sizeof(T));
  p += sizeof(T);
  return v;
}

// The {pid, tid, time} a non-sample record ends with (sample_id_all with TID | TIME).
struct SampleId {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
};
SampleId TrailingId(const uint8_t* record, size_t size) {
  SampleId id;
  if (size >= sizeof(perf_event_header) + 16) std::memcpy(&id, record + size - 16, 16);
  return id;
}

}  // namespace

Result<std::unique_ptr<CpuSampler>> CpuSampler::Start(int pid, const std::string& session,
                                                      const CpuSamplerOptions& options) {
  if (options.rate_hz == 0 || options.rate_hz > 100000)
    return Error{"sample_rate: between 1 and 100000 (Hz)"};
  if (options.stack_bytes % 8 != 0 || options.stack_bytes > 65528)
    return Error{"sample_stack_bytes: a multiple of 8, at most 65528"};
  if (const char* deny = getenv(st::kEnvSampleDenyPerf); deny && *deny && *deny != '0')
    return Error{std::string("perf_event_open: denied (") + st::kEnvSampleDenyPerf + " is set)"};
  std::unique_ptr<CpuSampler> s(new CpuSampler());
  s->options_ = options;
  const long cpus = sysconf(_SC_NPROCESSORS_CONF);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // One event per CPU; 0, or the errno of the first CPU that refused it.
  auto open_all = [&](uint64_t cycles_period) {
    for (long cpu = 0; cpu < cpus; ++cpu) {
      perf_event_attr a = MakeAttr(options, cycles_period);
      int fd = PerfEventOpen(&a, pid, static_cast<int>(cpu));
      if (fd < 0) {
        const int err = errno;
        if (err == ENODEV || err == ENXIO) continue;  // an offline CPU
        for (Ring& r : s->rings_) close(r.fd);
        s->rings_.clear();
        return err;
      }
      s->rings_.push_back(Ring{fd, nullptr, 0});
    }
    return s->rings_.empty() ? ENODEV : 0;  // every CPU offline: not sampled by this event
  };
  auto refused = [](const char* what, int err) {
    return Error{std::string("perf_event_open") + what + ": " + strerror(err) +
                 (err == EACCES || err == EPERM
                      ? " (kernel.perf_event_paranoid or a container's seccomp forbids it)"
                      : "")};
  };
  int err = 0;
  bool cycles = false;
  if (options.event != SampleEvent::kCpuClock) {
    const uint64_t hz = MaxCyclesPerSecond();
    if (hz == 0) {
      if (options.event == SampleEvent::kCycles)
        return Error{"perf_event_open (cycles): the CPU's clock rate is unknown"};
      s->note_ = "hardware cycles: the CPU's clock rate is unknown";
    } else {
      const uint64_t period = std::max<uint64_t>(hz / options.rate_hz, 1000);
      err = open_all(period);
      if (err == 0) {
        cycles = true;
        char note[160];
        snprintf(note, sizeof note,
                 "every %llu cycles: 1/%u s at %.2f GHz, the CPU's highest clock",
                 static_cast<unsigned long long>(period), options.rate_hz, hz / 1e9);
        s->note_ = note;
      } else if (options.event == SampleEvent::kCycles) {
        return refused(" (cycles)", err);
      } else {
        s->note_ = std::string("no hardware cycle counter here: ") + strerror(err);
      }
    }
  }
  if (!cycles) {
    err = open_all(0);
    if (err != 0) return refused("", err);
  }
  s->method_ = cycles ? st::kSamplePerfCycles : st::kSamplePerfCpuClock;
  if (s->rings_.empty()) return Error{"perf_event_open: no CPU could be sampled"};
  // 1 MiB of buffer per CPU holds ~100 ms of one thread's samples at 999 Hz with 8 KiB stacks;
  // the locked-memory limit may allow less.
  for (size_t pages = 256; pages >= 8; pages /= 2) {
    size_t mapped = 0;
    for (Ring& r : s->rings_) {
      void* m = mmap(nullptr, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
      if (m == MAP_FAILED) break;
      r.base = static_cast<uint8_t*>(m);
      r.data_size = pages * page;
      ++mapped;
    }
    if (mapped == s->rings_.size()) {
      s->map_bytes_ = (pages + 1) * page;
      break;
    }
    for (Ring& r : s->rings_) {
      if (r.base) munmap(r.base, (pages + 1) * page);
      r.base = nullptr;
    }
  }
  if (s->map_bytes_ == 0) {
    for (Ring& r : s->rings_) close(r.fd);
    s->rings_.clear();
    return Error{std::string("perf_event_open: cannot map the sample buffers: ") + strerror(errno)};
  }
  const std::string path = session + "/" + st::kSamplesFile;
  s->file_ = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (s->file_ < 0) return Error{path + ": cannot create: " + strerror(errno)};
  s->out_ = std::make_unique<Buffer>();
  st::FileHeader header{};
  std::memcpy(header.magic, st::kMagic, sizeof header.magic);
  header.version = st::kVersion;
  header.header_size = sizeof header;
  st::PutFixed(*s->out_, header);
  const int64_t mono = NowNs(CLOCK_MONOTONIC);
  st::AppendBlockTo(*s->out_,
                    st::ClockBlock{static_cast<uint64_t>(mono), mono, NowNs(CLOCK_REALTIME)});
  st::SampleConfigBlock config;
  config.method = s->method_;
  config.rate_hz = options.rate_hz;
  config.stack_bytes = options.stack_bytes;
  config.note = s->note_;
  st::AppendBlockTo(*s->out_, config);
  s->scratch_.resize(s->rings_.front().data_size);
  s->thread_ = std::thread([p = s.get()] { p->Run(); });
  return s;
}

CpuSampler::~CpuSampler() {
  Stop();
  for (Ring& r : rings_) {
    if (r.base) munmap(r.base, map_bytes_);
    if (r.fd >= 0) close(r.fd);
  }
}

bool ParseSampleEvent(std::string_view text, SampleEvent* event) {
  if (text == "auto")
    *event = SampleEvent::kAuto;
  else if (text == "cycles")
    *event = SampleEvent::kCycles;
  else if (text == "cpu-clock")
    *event = SampleEvent::kCpuClock;
  else
    return false;
  return true;
}

const char* CpuSampler::method_name() const {
  return method_ == st::kSamplePerfCycles ? "perf_event_open (cycles)"
                                          : "perf_event_open (cpu-clock)";
}

void CpuSampler::Run() {
  std::vector<pollfd> fds;
  for (const Ring& r : rings_) fds.push_back(pollfd{r.fd, POLLIN, 0});
  while (!stop_.load(std::memory_order_acquire)) {
    poll(fds.data(), fds.size(), 10);
    DrainAll();
  }
}

bool CpuSampler::DrainAll() {
  // Every sample taken before `mono` is in a ring now: the clock block after them says so, and
  // a live session cuts its windows' samples up to there (live_samples.h).
  const int64_t mono = NowNs(CLOCK_MONOTONIC);
  for (size_t i = 0; i < rings_.size(); ++i) DrainRing(i);
  st::AppendBlockTo(*out_,
                    st::ClockBlock{static_cast<uint64_t>(mono), mono, NowNs(CLOCK_REALTIME)});
  Flush();
  return true;
}

void CpuSampler::Stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  thread_.join();
  DrainAll();
  st::AppendBlockTo(*out_, st::SampleDropsBlock{stats_.lost, stats_.throttled, 0});
  Flush();
  if (file_ >= 0) close(file_);
  file_ = -1;
}

void CpuSampler::DrainRing(size_t i) {
  Ring& r = rings_[i];
  auto* meta = reinterpret_cast<perf_event_mmap_page*>(r.base);
  const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  const uint8_t* data = r.base + (meta->data_offset ? meta->data_offset : sysconf(_SC_PAGESIZE));
  const uint64_t mask = r.data_size - 1;
  while (tail + sizeof(perf_event_header) <= head) {
    perf_event_header h;
    for (size_t k = 0; k < sizeof h; ++k)
      reinterpret_cast<uint8_t*>(&h)[k] = data[(tail + k) & mask];
    if (h.size < sizeof h || tail + h.size > head) break;
    const uint64_t at = tail & mask;
    const uint8_t* record = data + at;
    if (at + h.size > r.data_size) {  // wraps: copy it out whole
      const size_t first = r.data_size - at;
      std::memcpy(scratch_.data(), data + at, first);
      std::memcpy(scratch_.data() + first, data, h.size - first);
      record = scratch_.data();
    }
    HandleRecord(record, h.size);
    tail += h.size;
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

void CpuSampler::HandleRecord(const uint8_t* record, size_t size) {
  perf_event_header h;
  std::memcpy(&h, record, sizeof h);
  const uint8_t* p = record + sizeof h;
  const uint8_t* end = record + size;
  bool ok = true;
  switch (h.type) {
    case PERF_RECORD_SAMPLE: {
      st::SampleBlock b;
      Read<uint64_t>(p, end, &ok);  // ip (also regs[IP])
      b.pid = Read<uint32_t>(p, end, &ok);
      b.tid = Read<uint32_t>(p, end, &ok);
      b.time_ns = Read<uint64_t>(p, end, &ok);
      const uint64_t abi = Read<uint64_t>(p, end, &ok);
      uint64_t regs[st::SampleBlock::kMaxRegs] = {};
      if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
        const int n = __builtin_popcountll(kUserRegsMask);
        for (int k = 0; k < n; ++k) regs[k] = Read<uint64_t>(p, end, &ok);
        b.regs_mask = kUserRegsMask;
        b.regs = regs;
      }
      const uint64_t stack_size = Read<uint64_t>(p, end, &ok);
      const uint8_t* stack = p;
      if (ok && static_cast<uint64_t>(end - p) >= stack_size)
        p += stack_size;
      else
        ok = false;
      const uint64_t dyn_size = stack_size ? Read<uint64_t>(p, end, &ok) : 0;
      if (!ok) return;
      b.stack =
          std::string_view(reinterpret_cast<const char*>(stack), std::min(dyn_size, stack_size));
      st::AppendBlockTo(*out_, b);
      ++stats_.samples;
      break;
    }
    case PERF_RECORD_MMAP2: {
      st::SampleMappingBlock b;
      b.pid = Read<uint32_t>(p, end, &ok);
      Read<uint32_t>(p, end, &ok);  // tid
      b.start = Read<uint64_t>(p, end, &ok);
      b.length = Read<uint64_t>(p, end, &ok);
      b.file_offset = Read<uint64_t>(p, end, &ok);
      char build_id[41] = {};
      if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
        const uint8_t n = Read<uint8_t>(p, end, &ok);
        p += 3;
        for (uint8_t k = 0; k < n && k < 20 && p + k < end; ++k)
          snprintf(build_id + 2 * k, 3, "%02x", p[k]);
        p += 20;
      } else {
        p += 24;  // maj, min, ino, ino_generation
      }
      const uint32_t prot = Read<uint32_t>(p, end, &ok);
      Read<uint32_t>(p, end, &ok);  // flags
      if (!ok || p >= end) return;
      b.executable = (prot & PROT_EXEC) != 0;
      b.path = std::string_view(reinterpret_cast<const char*>(p),
                                strnlen(reinterpret_cast<const char*>(p), end - p));
      b.build_id = build_id;
      b.time_ns = TrailingId(record, size).time;
      st::AppendBlockTo(*out_, b);
      break;
    }
    case PERF_RECORD_COMM: {
      st::SampleTaskBlock b;
      b.pid = Read<uint32_t>(p, end, &ok);
      b.tid = Read<uint32_t>(p, end, &ok);
      if (!ok) return;
      b.name = std::string_view(reinterpret_cast<const char*>(p),
                                strnlen(reinterpret_cast<const char*>(p), end - p));
      b.kind = (h.misc & PERF_RECORD_MISC_COMM_EXEC) ? st::kTaskExec : st::kTaskComm;
      b.time_ns = TrailingId(record, size).time;
      st::AppendBlockTo(*out_, b);
      break;
    }
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT: {
      st::SampleTaskBlock b;
      b.kind = h.type == PERF_RECORD_FORK ? st::kTaskFork : st::kTaskExit;
      b.pid = Read<uint32_t>(p, end, &ok);
      b.parent_pid = Read<uint32_t>(p, end, &ok);
      b.tid = Read<uint32_t>(p, end, &ok);
      b.parent_tid = Read<uint32_t>(p, end, &ok);
      b.time_ns = Read<uint64_t>(p, end, &ok);
      if (ok) st::AppendBlockTo(*out_, b);
      break;
    }
    case PERF_RECORD_LOST: {
      Read<uint64_t>(p, end, &ok);  // id
      const uint64_t lost = Read<uint64_t>(p, end, &ok);
      if (ok) stats_.lost += lost;
      break;
    }
    case PERF_RECORD_THROTTLE:
      ++stats_.throttled;
      break;
    default:
      break;
  }
}

void CpuSampler::Flush() {
  if (out_->used == 0) return;
  if (!write_failed_ && file_ >= 0) {
    size_t done = 0;
    while (done < out_->used) {
      ssize_t n = write(file_, out_->bytes.data() + done, out_->used - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        write_failed_ = true;
        break;
      }
      done += static_cast<size_t>(n);
    }
    stats_.bytes += done;
  }
  out_->used = 0;
}

}  // namespace profsh
