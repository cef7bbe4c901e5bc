// The `cuda` activity: CUPTI's activity API inside the workload. The CUDA driver calls
// InitializeInjection (exported by this library, named by CUDA_INJECTION64_PATH) at cuInit; it
// loads libcupti, subscribes, registers the collector's clock and a bounded pool of buffers,
// and enables the activity kinds. CUPTI fills the buffers on its own threads; the drain thread
// flushes them each round and turns their records into kGpuActivity blocks of the stream.
#pragma once

#include "engine/collector/runtime/drain.h"

namespace profsh::runtime {

// The drain round's GPU part (caller holds g_stream.mutex): asks CUPTI for the records it has
// (as `flush` says), encodes every completed buffer into `events`, and CUPTI's notices and drop
// counts into `metadata`. Once CUPTI is off (after exit's flush) it calls no CUPTI function.
void DrainGpuActivity(BlockBuffer& metadata, BlockBuffer& events, GpuFlush flush);

// CUPTI is off: no drain calls it again (at exit, after its last records were taken). Before
// an exec (`for_exec`) it stays subscribed: an exec that fails turns it on again.
void StopGpuActivity(bool for_exec = false);
void ResumeGpuActivityAfterFailedExec();
// Whether drains still call CUPTI.
bool GpuActivityOn();

// After fork: the child has no CUPTI session of its own until its driver calls the injection.
void ResetGpuActivityAfterFork();

}  // namespace profsh::runtime
