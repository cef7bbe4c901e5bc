// The cpu activity's samples file (stream_format.h kSamplesFile) into the trace: each sample's
// stack unwound and symbolised (engine/symbols) in the address space its process had at that
// moment (mappings, forks and execs replayed in time order), and added as an instant event of
// category "cpu_sample" on its thread's track, named by its innermost function, with the whole
// stack (root first, ';'-separated, as folded stacks are) and the modules of its frames as
// arguments. A Python thread's samples carry its Python frames too, spliced in at the
// interpreter's eval loop (SpliceWithPython). Which ranges were open at a sample is decided from
// the trace by the analyses (engine/analysis/cpu_samples), so torch.profiler's merged events count
// too.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/decoding/session_summary.h"
#include "engine/session/torch_fallback.h"
#include "engine/stream/sample_codec.h"
#include "engine/trace/trace_builder.h"
#include "engine/util/result.h"

namespace profsh {

inline constexpr char kCpuSampleCategory[] = "cpu_sample";
// The module named for Python frames in a sample's `modules`.
inline constexpr char kPythonFrameModule[] = "[python]";

// The Python calls the torch plugin recorded (stream::kPythonCallsDomain), per thread: a
// sample's Python stack is the calls open on its thread at its time.
class PythonCalls {
 public:
  struct Call {
    int64_t begin_ns = 0, end_ns = 0;  // absolute (realtime)
    uint32_t name = 0;                 // index into names()
  };
  // Only calls some sample of their thread falls in are kept (once times were noted), so that
  // what is kept grows with the samples, not with the calls.
  void NoteSampleTimes(const std::string& samples_path);
  void Add(int64_t pid, int64_t tid, int64_t begin_ns, int64_t end_ns, std::string_view name);
  // Each thread's calls by start, outer first among equal starts.
  void Sort();
  const std::vector<Call>* Of(int64_t pid, int64_t tid) const;
  const std::string& name(uint32_t i) const { return names_[i]; }
  bool empty() const { return threads_.empty(); }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::map<std::pair<int64_t, int64_t>, std::vector<Call>> threads_;
  bool filtered_ = false;
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> sample_times_;  // sorted, realtime
};

// The Python calls open on each thread, followed in time order (At is asked in time order).
class OpenPythonCalls {
 public:
  explicit OpenPythonCalls(const PythonCalls& calls) : calls_(calls) {}
  // The Python frames open on (pid, tid) at `ns` (absolute), outermost first.
  const std::vector<const std::string*>& At(int64_t pid, int64_t tid, int64_t ns);

 private:
  struct Thread {
    const std::vector<PythonCalls::Call>* calls = nullptr;
    size_t next = 0;
    std::vector<const PythonCalls::Call*> open;  // by start: outermost first
  };
  const PythonCalls& calls_;
  std::map<std::pair<int64_t, int64_t>, Thread> threads_;
  std::vector<const std::string*> frames_;
};

// One sample's stack, symbolised.
struct SampleStack {
  std::string stack;                             // root first, ';'-separated
  std::string modules;                           // the module of each frame, in the same order
  std::string leaf;                              // the innermost function
  std::vector<std::string> names, module_names;  // the frames, root first
  bool has_eval_loop = false;
};

// A samples file's task, mapping and sample blocks, given in time order: each sample unwound
// and symbolised in the address space its process had at that moment.
class SampleUnwinder {
 public:
  SampleUnwinder();
  ~SampleUnwinder();
  void Task(const stream::SampleTaskBlock& t);
  void Mapping(const stream::SampleMappingBlock& m);
  // Shared with later samples of the same return addresses in the same address space.
  std::shared_ptr<const SampleStack> Stack(const stream::SampleBlock& s);
  uint64_t unnamed_frames() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Samples into a trace: an instant event each (kCpuSampleCategory), Python frames spliced in.
class SampleEventWriter {
 public:
  explicit SampleEventWriter(TraceBuilder& builder) : builder_(builder) {}
  // `python`: the Python frames open on the sample's thread, outermost first (may be empty).
  void Add(const SampleStack& stack, const std::vector<const std::string*>& python, int64_t pid,
           int64_t tid, int64_t ts, uint32_t weight, SessionSummary& summary);

 private:
  TraceBuilder& builder_;
  std::unordered_map<std::string, uint32_t> schemas_;
  SampleStack spliced_;
};

// How a samples file says its samples were taken, for people ("perf_event_open (cpu-clock) at
// 999 Hz").
std::string SamplingMethodText(const stream::SampleConfigBlock& config);
// The time (CLOCK_MONOTONIC ns) of a kSampleTask, kSampleMapping or kSample block; false for
// other blocks, or one too short.
bool SampleBlockTime(uint32_t type, std::string_view payload, uint64_t* time_ns);

// Whether a native frame is the interpreter's eval loop, where Python frames are spliced in.
bool IsEvalLoopFrame(std::string_view function);

// Splices `python` (outermost first) into `native` (a stack's frames, root first) at its
// eval-loop frames e_1..e_K (outermost first): e_j for j < K is followed by the j-th Python
// frame (one each, while there are any), e_K by all the Python frames left; native frames called
// from Python follow them. With no eval-loop frame the stack is left as it is (returns false).
bool SpliceWithPython(const std::vector<std::string>& native,
                      const std::vector<std::string>& native_modules,
                      const std::vector<const std::string*>& python,
                      std::vector<std::string>& names, std::vector<std::string>& modules);

// Reads `path` (a samples file) into `builder`'s trace, whose ts 0 is `origin_ns` (realtime).
// Samples of a process recorded in windows only (a schedule) are kept inside its windows.
Status ReadCpuSamples(const std::string& path, int64_t origin_ns,
                      const std::vector<RecordingWindow>& windows, const PythonCalls& python,
                      TraceBuilder& builder, SessionSummary& summary,
                      std::vector<std::string>& warnings);

}  // namespace profsh
