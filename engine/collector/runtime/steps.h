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
#include "engine/stream/step_regex.h"

namespace profsh::runtime {

struct StepConfig {
  bool has_schedule = false;
  Schedule schedule;
  bool on_demand = false;        // idle until a request arrives through the control block
  const char* marker = nullptr;  // Lua pattern; null: no markers (or a regex below)
  const stream::StepRegex* marker_regex = nullptr;  // regular expression; null: none
  const char* marker_regex_text = nullptr;          // its text
  const char* capture = nullptr;                    // exact range name; null: no capture ranges
};

// Reads PROFSH_SCHEDULE, PROFSH_STEP_MARKER or PROFSH_STEP_REGEX, PROFSH_CAPTURE_RANGE,
// PROFSH_ON_DEMAND and sets
// the initial recording flags. Returns false for a malformed configuration.
bool ConfigureSteps();
const StepConfig& step_config();

// The tags a new string gets (interning calls it once per distinct string).
uint32_t TagsForName(const char* text, size_t length);

// One step boundary, now.
void StepBoundary();

// A range or mark named `name` (an id, tags cleared) while kOffBeforeFirstStep is set: counted,
// for the names a marker that never matches could have been (about: see steps.cpp).
void CountNameBeforeFirstStep(uint32_t name);
// The drain thread, after the round's strings are defined: the most frequent of those names,
// about once a second (and when `final`) while no step has come.
void DrainNameCounts(bool final);

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
