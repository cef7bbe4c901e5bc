// The TensorBoard profiler plugin's distributed view (communication.py, loader.py's
// _process_distributed_profiles and run_generator.py's DistributedRunGenerator at kineto
// 041e7ce): per worker and step, the computation, overlapping, communication and other time and
// the communication's data transfer and synchronizing time; per worker, the communication
// operators' statistics. Nanoseconds here; docs/ANALYSIS.md ("TensorBoard views") defines each
// figure and where profsh differs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/analysis/analysis_rows.h"
#include "engine/analysis/gpu_intervals.h"
#include "engine/analysis/model/event_model.h"

namespace profsh::tensorboard {

// One nccl:* or gloo:* operator of a worker, with the time ranges it communicated in: its own
// range, then (NCCL) the kernels of the same External id.
struct CommunicationOp {
  std::string name;
  int64_t ts, end;
  int64_t bytes;  // its inputs' sizes times their element sizes (communication.py's table)
  std::vector<Interval> kernel_ranges;
};

// The worker's collectives in the plugin's order (start, longer first); none when it uses both
// NCCL and Gloo (the plugin then turns its distributed view off).
std::vector<CommunicationOp> CommunicationOpsOf(const EventModel& model);

// What the view needs of a worker: its steps (the overview's, widened to their device work)
// and the merged busy time of its computation (kernels, or CPU operators on a trace without
// kernels) and of its communication.
struct DistributedWorker {
  std::string name;
  std::vector<std::string> step_names;
  std::vector<Interval> steps;
  std::vector<Interval> computation, communication;  // merged
  std::vector<CommunicationOp> ops;
};

struct WorkerStepFigures {
  std::string worker, step;  // step "all": the mean over the worker's steps
  // The plugin's chart: computation and communication without their overlap.
  double computation = 0, overlapping = 0, communication = 0, other = 0;
  // Of the communication: the time all workers spent moving data (each collective's shortest
  // duration over the workers), and the rest, spent waiting for the others.
  double data_transfer = 0, synchronizing = 0;
  bool has_wait = false;  // the step holds communication operators
};

struct CommunicationOpStats {
  std::string worker, name;
  int64_t calls = 0, bytes = 0;
  int64_t latency = 0;        // the union of its ranges
  int64_t data_transfer = 0;  // the union of its data transfer ranges
};

struct DistributedSummary {
  std::vector<WorkerStepFigures> steps;   // by step ("all" first, then in order), then worker
  std::vector<CommunicationOpStats> ops;  // by worker, then in the order the ops first come
  std::vector<std::string> notes;         // why the wait figures are missing, ...
};

// Workers are ordered by name, as the plugin orders them.
DistributedSummary BuildDistributedSummary(std::vector<DistributedWorker> workers);

// step rows: worker, step, computation, overlapping, communication, other, data_transfer,
// synchronizing (µs); ops rows: worker, name, calls, total_bytes, avg_bytes, total_latency,
// avg_latency, data_transfer, avg_data_transfer (µs).
struct DistributedSummaryRows {
  AnalysisRows steps, ops;
};
DistributedSummaryRows DistributedSummaryAsRows(const DistributedSummary& summary);

}  // namespace profsh::tensorboard
