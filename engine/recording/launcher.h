// Runs a workload under the collector: a private session folder, the injection variables
// (LD_PRELOAD, NVTX_INJECTION64_PATH, INTEL_LIBITTNOTIFY64) in its environment, and the exit
// status it ended with. Used by `profsh run` and by profsh.profile():run().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/recording/cpu_sampler.h"
#include "engine/stream/schedule.h"
#include "engine/util/result.h"

namespace profsh {

// How PyTorch operators' Python stacks are recorded (with_stack).
enum class StackForm {
  kNone,
  kExecutingLine,  // each frame at the line it is executing (with_stack=true)
  kTorch,          // torch 1.13's form: def lines, C functions as frames (with_stack="torch")
};

// What is recorded when no activities are named: nvtx, itt, torch, and cuda where a CUDA
// driver (libcuda.so.1) can be loaded; not cpu (sampling costs more and needs perf_event_open or
// timers).
std::vector<std::string> DefaultActivities();

// How a step marker is written: a Lua pattern (profsh.profile{step_marker=}, the Lua API) or a
// regular expression in ECMAScript syntax (profsh run --step-marker, engine/stream/step_regex.h).
enum class StepMarkerSyntax { kLuaPattern, kRegex };

struct LaunchOptions {
  std::vector<std::string> argv;  // the command; argv[0] is looked up in PATH
  std::vector<std::string> activities = DefaultActivities();
  std::string cupti;  // libcupti for the cuda activity; empty: beside the CUDA toolkit
  // torch.profiler's options, for the PyTorch operator source (and memory for every workload).
  bool record_shapes = false;
  StackForm with_stack = StackForm::kNone;
  bool with_flops = false;
  bool profile_memory = false;
  // With profile_memory: every process's allocations, not only the command's and those of its
  // Python and torch processes (engine/collector/runtime/memory_scope.h).
  bool profile_memory_all = false;
  std::string collector;             // the runtime library; FindCollector() when empty
  uint32_t buffer_kb = 0;            // per-thread buffer; 0: the runtime's default
  uint32_t drain_ms = 0;             // drain interval; 0: the runtime's default
  uint64_t ring_total_kb = 0;        // the per-thread buffers' total per process; 0: no bound
  std::optional<Schedule> schedule;  // record chosen windows of steps
  std::string step_marker;           // step range/mark names, in step_marker_syntax (default below)
  StepMarkerSyntax step_marker_syntax = StepMarkerSyntax::kLuaPattern;
  std::string capture_range;  // record only inside ranges of this name
  bool on_demand = false;     // start idle; record on request (profsh trace)
  // Called about every 20 ms while the workload runs (reading finished windows, serving
  // requests).
  std::function<void()> poll;
  // Called once the workload has started (its exec succeeded), with its pid.
  std::function<void(int64_t pid)> launched;
  std::string session;  // an existing session folder to record into (empty: a new one)
  // Activity "cpu": samples per second of CPU time, and bytes of user stack copied per sample.
  uint32_t sample_rate = 999;
  uint32_t sample_stack_bytes = 8192;
  SampleEvent sample_event = SampleEvent::kAuto;  // what perf_event_open counts
  // Live windows: how long a window waits after its end for the GPU work launched in it
  // (kDefaultGpuWaitMs).
  uint32_t gpu_wait_ms = 10000;
};

// PyTorch's step ranges: ProfilerStep#N.
inline constexpr char kDefaultStepMarker[] = "^ProfilerStep#%d+";

struct LaunchResult {
  int exit_code = 0;    // the workload's status, as a shell reports it (128 + signal if killed)
  int term_signal = 0;  // the signal that killed it, or 0
  std::string session;  // the folder its processes wrote their streams to
  std::vector<std::string> notices;  // what the user should know (an injection not taken over)
  int64_t pid = 0;                   // the workload's process
  // SIGINT, SIGTERM or SIGHUP that profsh received while waiting, passed on to the workload.
  int signals_received = 0;
  int forwarded_signal = 0;  // the last of them
  // That last one was Ctrl-C from the terminal: the workload got it from the terminal too (the
  // whole foreground group does), and profsh did not pass it on.
  bool signal_from_terminal = false;
  // After a second signal profsh stops waiting: the workload may still be running, and its
  // streams are read as they are (exit_code is then 128 + the signal).
  bool still_running = false;
  // Activity "cpu": how the samples were taken ("perf_event_open (cpu-clock)", ...), and why
  // perf_event_open could not be used when it could not.
  std::string sampling_method;
  std::string sampling_note;
  uint64_t samples_taken = 0;
};

// The activities profsh can collect from an unmodified workload.
const std::vector<std::string>& KnownActivities();
// "nvtx, itt, torch", for messages.
std::string ActivityList();
// Limits of LaunchOptions::buffer_kb and drain_ms (0: the runtime's default).
constexpr uint32_t kMaxBufferKb = 1u << 20;
constexpr uint32_t kMaxDrainMs = 100;
constexpr uint32_t kMaxGpuWaitMs = 3600000;  // an hour

// The collector library: $PROFSH_COLLECTOR, or libprofsh_collector.so beside the executable
// (or in ../lib/profsh).
Result<std::string> FindCollector();

// A new folder, readable only by this user, for one session's streams.
Result<std::string> CreateSessionFolder();

// Starts the workload, waits for it (Ctrl-C, SIGTERM and SIGHUP go to the workload; profsh waits
// on; a second one stops the wait) and returns how it ended. Fails only when it could not be
// started.
Result<LaunchResult> RunWorkload(const LaunchOptions& options);

// Removes a session folder and its streams.
void RemoveSessionFolder(const std::string& folder);

// Checks a step marker: a Lua pattern (the subset the collector implements) or a regular
// expression (what std::regex's ECMAScript grammar accepts, back-references excepted).
Status CheckStepMarker(const std::string& pattern,
                       StepMarkerSyntax syntax = StepMarkerSyntax::kLuaPattern);

// The control block of a session (on-demand requests, stop), mapped shared.
class ControlChannel {
 public:
  static Result<std::unique_ptr<ControlChannel>> Create(const std::string& session);
  ~ControlChannel();
  // Asks process `pid` (0: every process) to record its next `steps` steps; returns the id.
  uint64_t Request(int64_t pid, int64_t steps);
  // Stops recording in every process of the session.
  void Stop();

 private:
  ControlChannel() = default;
  void* block_ = nullptr;
  uint64_t next_id_ = 1;
  int next_slot_ = 0;
};

}  // namespace profsh
