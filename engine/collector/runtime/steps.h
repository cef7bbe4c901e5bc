// Steps, schedules and capture ranges inside the runtime. A step boundary (a range or mark whose
// name matches the step marker pattern, or profsh_step()) advances the step counter and applies
// torch's schedule: the recording flag is set for WARMUP and RECORD steps and cleared for NONE,
// so that between windows the per-event path costs one flag read. Capture ranges switch the
// flag on while a range of that name is open. Every change goes into the stream (kStep,
// kCapture) for the reader, which cuts windows there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/stream/schedule.h"

namespace profsh::runtime {

struct StepConfig {
  bool has_schedule = false;
  Schedule schedule;
  bool on_demand = false;         // idle until a request arrives through the control block
  const char* marker = nullptr;   // Lua pattern; null: no markers
  const char* capture = nullptr;  // exact range name; null: no capture ranges
};

// Reads PROFSH_SCHEDULE, PROFSH_STEP_MARKER, PROFSH_CAPTURE_RANGE, PROFSH_ON_DEMAND and sets
// the initial recording flags. Returns false for a malformed configuration.
bool ConfigureSteps();
const StepConfig& step_config();

// The tags a new string gets (interning calls it once per distinct string).
uint32_t TagsForName(const char* text, size_t length);

// One step boundary, now.
void StepBoundary();

// The drain thread: step, capture and on-demand records since the last call, as stream blocks.
void DrainStepEvents();
// The drain thread: a request for the next `steps` steps (on-demand tracing).
void ArmOnDemand(uint64_t request, int64_t steps);
// The drain thread: the profiler was stopped.
void StopRecording();
// After fork: the child starts with an empty step log.
void ResetStepLog();
// Step boundaries, capture ranges and stops that found the step log full (not recorded).
uint64_t LostStepRecords();
// The fork child inherits the lock state; these keep it consistent.
void LockStepsForFork();
void UnlockStepsAfterFork();

}  // namespace profsh::runtime
