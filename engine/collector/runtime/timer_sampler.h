// The cpu activity's fallback, for when perf_event_open is denied to profsh (perf_event_paranoid,
// a container's seccomp): every thread of the process gets a CLOCK_THREAD_CPUTIME_ID timer whose
// signal (a real-time signal the workload leaves at its default) lands on that thread; the
// handler copies the registers and a slice of the stack into the thread's ring (no lock, no
// allocation, no system call but the vDSO clock; a full ring drops and counts). A writer thread
// of its own turns the rings into a samples file (stream_format.h kSample* blocks, one file per
// process image: cpu-samples-PID-N.psamples, N counting the execs of PID), with the process's
// executable mappings from /proc/self/maps. Started only when the launcher sets
// PROFSH_SAMPLE_TIMER.
#pragma once

namespace profsh::runtime {

// At load, after the session is known; does nothing unless PROFSH_SAMPLE_TIMER is set.
void StartTimerSampling(const char* session);
// In each new thread (the pthread_create wrapper); a thread-specific key's destructor deletes
// the timer and frees the slot however the thread ends (return, pthread_exit, cancel).
void StartThreadTimer();
// At exit, exec or _exit: every timer off, the rings written out, the file closed (before an
// exec, left open for a failed exec to go on with).
void StopTimerSampling(bool for_exec);
// After an exec that failed: the writer and every thread's timer again.
void ResumeTimerSamplingAfterFailedExec();
bool TimerSamplingActive();

}  // namespace profsh::runtime
