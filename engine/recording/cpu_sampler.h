// The cpu activity's capture in the profsh process: perf_event_open on the workload's pid, one
// inherited event per CPU (so every thread of every process the workload forks is sampled on
// its CPU time), started by the workload's exec (enable_on_exec), timed on CLOCK_MONOTONIC.
// A thread reads the kernel's buffers and writes their samples, mappings and task records to
// the session's samples file (stream_format.h kSamplesFile) through sample_codec.h; unwinding
// and symbolisation happen when the session is read, never in the workload.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/util/result.h"

namespace profsh {

// What the samples count: hardware cycles where the machine counts them (else the CPU clock),
// or either one alone.
enum class SampleEvent : uint8_t { kAuto, kCycles, kCpuClock };

struct CpuSamplerOptions {
  uint32_t rate_hz = 999;
  uint32_t stack_bytes = 8192;  // user stack copied per sample (perf's default)
  SampleEvent event = SampleEvent::kAuto;
};

// "auto", "cycles", "cpu-clock"; false for anything else.
bool ParseSampleEvent(std::string_view text, SampleEvent* event);

struct CpuSamplerStats {
  uint64_t samples = 0;
  uint64_t lost = 0;       // PERF_RECORD_LOST: the buffer was full
  uint64_t throttled = 0;  // PERF_RECORD_THROTTLE
  uint64_t bytes = 0;
};

class CpuSampler {
 public:
  // Opens the events on `pid`, which has not exec'd yet (they start at its exec). An error
  // (perf_event_open denied, ...) says why; the caller falls back to the collector's timers.
  static Result<std::unique_ptr<CpuSampler>> Start(int pid, const std::string& session,
                                                   const CpuSamplerOptions& options);
  ~CpuSampler();
  // Reads what is left and closes the file.
  void Stop();
  const char* method_name() const;
  const CpuSamplerStats& stats() const { return stats_; }

 private:
  CpuSampler() = default;
  void Run();
  bool DrainAll();
  void DrainRing(size_t i);
  void HandleRecord(const uint8_t* record, size_t size);
  void Flush();

  struct Ring {
    int fd = -1;
    uint8_t* base = nullptr;  // the metadata page, then the data pages
    size_t data_size = 0;
  };
  std::vector<Ring> rings_;
  size_t map_bytes_ = 0;
  std::vector<uint8_t> scratch_;  // one record copied out of a ring when it wraps
  struct Buffer;
  std::unique_ptr<Buffer> out_;
  int file_ = -1;
  uint8_t method_ = 0;
  std::string note_;  // why not cycles, or the cycles' period
  CpuSamplerOptions options_;
  CpuSamplerStats stats_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  bool write_failed_ = false;
};

}  // namespace profsh
