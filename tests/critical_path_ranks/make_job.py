#!/usr/bin/env python3
"""Writes the Kineto traces of a synthetic data-parallel job with a known critical path.

Each rank runs STEPS steps (ProfilerStep#N). A step launches KERNELS compute kernels, each from its
own operator (aten::mm -> cudaLaunchKernel -> a GEMM kernel on stream 7, waited for before the next
launch), then an all-reduce (record_param_comms -> cudaLaunchKernel -> an NCCL kernel on stream 20)
and a cudaStreamSynchronize on stream 20 (with its CUPTI "Stream Sync" event). The late rank runs
an extra aten::index_put_ of LATE_US before its all-reduce, so every other rank's NCCL kernel
starts early and waits for it: the all-reduce ends TRANSFER_US after the late rank arrives.

The ranks' clocks agree (the same timestamps base), so load_ranks' "abs" alignment keeps them,
unless --clock-skew-us moves rank r's clock r x US ahead. With --tail-rank, that rank runs an
aten::copy_ of step x TAIL_US after each all-reduce, and every rank's ProfilerStep#N ends at its
own last event (not the job's): that rank's step time drifts, growing TAIL_US a step.

  make_job.py OUT_DIR [--ranks N] [--steps N] [--kernels N] [--late-rank R] [--late-us US]
              [--clock-skew-us US] [--tail-rank R --tail-us-per-step US]
"""
import argparse
import json
import os

BASE = 1_700_000_000_000  # us
GEMM = "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel"
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
PID, TID = 1000, 1000
COMPUTE_STREAM, COMM_STREAM = 7, 20


def kernel_us(step, k):
    # Distinct durations, so that "the top kernels" are well defined: kernel k lasts 40 + 10 k us.
    return 40 + 10 * k


class Rank:
    def __init__(self, rank):
        self.rank = rank
        self.events = []
        self.corr = 1000

    def x(self, cat, name, pid, tid, ts, dur, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
        e["args"] = args or {}
        self.events.append(e)

    def launch(self, ts, kernel, kernel_ts, kernel_dur, stream, kernel_args=None):
        """cudaLaunchKernel at ts (3 us) and its kernel; returns the kernel's end."""
        self.corr += 1
        c = self.corr
        self.x("cuda_runtime", "cudaLaunchKernel", PID, TID, ts, 3,
               {"External id": c, "cbid": 211, "correlation": c})
        self.events.append({"ph": "s", "id": c, "pid": PID, "tid": TID, "ts": ts, "cat": "ac2g",
                            "name": "ac2g"})
        args = {"External id": c, "queued": 0, "device": 0, "context": 1, "stream": stream,
                "correlation": c}
        args.update(kernel_args or {})
        self.x("kernel", kernel, 0, stream, kernel_ts, kernel_dur, args)
        self.events.append({"ph": "f", "id": c, "pid": 0, "tid": stream, "ts": kernel_ts,
                            "cat": "ac2g", "name": "ac2g", "bp": "e"})
        return kernel_ts + kernel_dur

    def sync(self, ts, end, stream):
        self.corr += 1
        c = self.corr
        self.x("cuda_runtime", "cudaStreamSynchronize", PID, TID, ts, end - ts,
               {"External id": c, "cbid": 131, "correlation": c})
        self.x("cuda_sync", "Stream Sync", 0, stream, end - 2, 2,
               {"External id": c, "cuda_sync_kind": "Stream Sync", "stream": stream,
                "correlation": c, "device": 0, "context": 1})

    def document(self, world, clock_skew_us=0):
        skew = self.rank * clock_skew_us
        meta = [{"name": "process_name", "ph": "M", "ts": BASE, "pid": PID, "tid": 0,
                 "args": {"name": "python3"}},
                {"name": "process_name", "ph": "M", "ts": BASE, "pid": 0, "tid": 0,
                 "args": {"name": "python3"}},
                {"name": "process_labels", "ph": "M", "ts": BASE, "pid": 0, "tid": 0,
                 "args": {"labels": "GPU 0"}}]
        return {"schemaVersion": 1,
                "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "numSms": 108,
                                      "computeMajor": 8, "computeMinor": 0}],
                "distributedInfo": {"backend": "nccl", "rank": self.rank, "world_size": world},
                "traceEvents": [dict(e, ts=e["ts"] + skew) for e in meta + self.events]}


def make_job(ranks, steps, kernels, late_rank, late_us, transfer_us=30, tail_rank=None,
             tail_us_per_step=0):
    rs = [Rank(r) for r in range(ranks)]
    t = BASE + 100
    for step in range(steps):
        starts = {}
        arrivals = {}
        for r in rs:
            ts = t
            starts[r.rank] = ts
            ts += 5
            for k in range(kernels):
                op_ts = ts
                ts += 4  # the operator's own work before its launch
                end = r.launch(ts, GEMM if k % 2 == 0 else GEMM.replace("tn_n", "nn_n"),
                               ts + 5, kernel_us(step, k), COMPUTE_STREAM)
                r.x("cpu_op", "aten::mm", PID, TID, op_ts, 10, {"External id": r.corr})
                ts = max(ts + 6, end + 2)
            if r.rank == late_rank:
                r.x("cpu_op", "aten::index_put_", PID, TID, ts, late_us,
                    {"External id": r.corr + 1})
                ts += late_us + 2
            arrivals[r.rank] = ts
        last = max(arrivals.values())
        ends = {}
        for r in rs:
            ts = arrivals[r.rank]
            kernel_ts = ts + 4
            # The all-reduce ends when the last rank's kernel has run TRANSFER_US.
            end = max(arrivals.values()) + 4 + transfer_us
            r.launch(ts + 1, NCCL, kernel_ts, end - kernel_ts, COMM_STREAM,
                     {"Collective name": "allreduce", "Process Group Name": "0",
                      "Seq": step})
            r.x("cpu_op", "record_param_comms", PID, TID, ts, 6,
                {"External id": r.corr, "Collective name": "allreduce",
                 "Process Group Name": "0", "Seq": step})
            r.sync(ts + 7, end + 3, COMM_STREAM)
            ends[r.rank] = end + 5
            if tail_rank is not None and r.rank == tail_rank and step > 0:
                r.x("cpu_op", "aten::copy_", PID, TID, end + 5, step * tail_us_per_step,
                    {"External id": r.corr + 1})
                ends[r.rank] += step * tail_us_per_step + 2
        step_end = max(ends.values())
        for r in rs:
            own_end = ends[r.rank] if tail_rank is not None else step_end
            r.x("user_annotation", "ProfilerStep#%d" % step, PID, TID, starts[r.rank],
                own_end - starts[r.rank])
        t = step_end + 20
        del last
    return rs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--steps", type=int, default=1)
    p.add_argument("--kernels", type=int, default=3)
    p.add_argument("--late-rank", type=int, default=1)
    p.add_argument("--late-us", type=int, default=500)
    p.add_argument("--clock-skew-us", type=int, default=0)
    p.add_argument("--tail-rank", type=int, default=None)
    p.add_argument("--tail-us-per-step", type=int, default=0)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for r in make_job(a.ranks, a.steps, a.kernels, a.late_rank, a.late_us,
                      tail_rank=a.tail_rank, tail_us_per_step=a.tail_us_per_step):
        with open(os.path.join(a.out, "rank-%d.json" % r.rank), "w") as f:
            json.dump(r.document(a.ranks, a.clock_skew_us), f)


if __name__ == "__main__":
    main()
