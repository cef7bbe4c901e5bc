#!/usr/bin/env python3
"""The cuda activity on a real GPU: CUDA programs built here with the toolkit's nvcc run under
`profsh run --activities nvtx,cuda` and the kernels, copies and sets profsh recorded are counted.
Without a GPU (no /dev/nvidia0 or no loadable libcuda.so.1) the test is skipped (exit 77).

Usage: check_gpu.py PROFSH NVCC SOURCE_DIR
"""
import collections
import ctypes
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def have_gpu():
    if not os.path.exists("/dev/nvidia0"):
        return False
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def profile(profsh, exe, tmp):
    out = os.path.join(tmp, os.path.basename(exe) + ".json")
    r = subprocess.run([profsh, "run", "--activities", "nvtx,cuda", "-o", out, "--", exe],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "%s runs under profsh (%s)" % (os.path.basename(exe), r.stderr[-500:]))
    print(r.stderr, end="")
    if r.returncode != 0:
        return []
    with open(out) as f:
        return json.load(f)["traceEvents"]


def check_event_waits(ev):
    """The Stream Wait Event names the cudaEventRecord on the scale kernels' first stream, the
    Event Sync the one on the stream of the add kernel that waited (Kineto's wait_on_* args)."""
    records = {e["args"].get("correlation"): e for e in ev
               if e.get("cat") == "cuda_runtime" and e["name"] == "cudaEventRecord"}
    waits = {e["name"]: e["args"] for e in ev if e.get("cat") == "cuda_sync"
             and e["name"] in ("Stream Wait Event", "Event Sync")}
    scale_streams = sorted({e["tid"] for e in ev if e.get("cat") == "kernel" and "scale" in e["name"]})
    wait, sync = waits.get("Stream Wait Event", {}), waits.get("Event Sync", {})
    add_streams = {e["tid"] for e in ev if e.get("cat") == "kernel" and "add" in e["name"]}
    check(len(records) == 2 and wait.get("wait_on_cuda_event_record_corr_id") in records
          and sync.get("wait_on_cuda_event_record_corr_id") in records
          and wait["wait_on_cuda_event_record_corr_id"] < sync["wait_on_cuda_event_record_corr_id"]
          and wait.get("wait_on_stream") in scale_streams and sync.get("wait_on_stream") in add_streams
          and sync.get("wait_on_stream") != wait.get("wait_on_stream"),
          "streams: the stream wait and the event sync name their cudaEventRecord and its stream "
          "(records %s, wait %s, sync %s)" % (sorted(records), wait, sync))


def main():
    profsh, nvcc, src = sys.argv[1:4]
    if not have_gpu():
        print("no GPU here (/dev/nvidia0 and libcuda.so.1): skipped")
        sys.exit(77)
    include = os.path.join(os.path.dirname(os.path.dirname(nvcc)), "include")
    with tempfile.TemporaryDirectory(prefix="profsh-gpu-") as tmp:
        exe = os.path.join(tmp, "streams")
        subprocess.run([nvcc, "-O2", "-I", include, "-o", exe, os.path.join(src, "streams.cu")], check=True)
        ev = profile(profsh, exe, tmp)
        kernels = collections.Counter(e["name"] for e in ev if e.get("cat") == "kernel")
        scale = sum(v for k, v in kernels.items() if "scale" in k)
        add = sum(v for k, v in kernels.items() if "add" in k)
        check(scale == 20 and add == 11, "streams: 20 scale and 11 add kernels (%s)" % dict(kernels))
        # Demangled, as Kineto writes kernel names.
        check(kernels.get("scale(float*, int, float)") == 20
              and kernels.get("add(float*, float const*, int)") == 11,
              "streams: kernel names demangled as Kineto writes them (%s)" % dict(kernels))
        streams = {e["tid"] for e in ev if e.get("cat") == "kernel" and "scale" in e["name"]}
        check(len(streams) == 2, "streams: the scale kernels ran on two streams (%s)" % streams)
        copies = collections.Counter(e["args"].get("copy kind") for e in ev if e.get("cat") == "gpu_memcpy")
        check(copies.get("HtoD") == 2 and copies.get("DtoH") == 1, "streams: copies %s" % dict(copies))
        check(sum(1 for e in ev if e.get("cat") == "gpu_memset") == 1, "streams: one memset")
        flows = sum(1 for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "f")
        check(flows >= 35, "streams: an ac2g flow to each kernel, copy and set (%d)" % flows)
        check_event_waits(ev)
        lib = os.path.join(os.path.dirname(os.path.dirname(nvcc)), "lib64", "libcublas.so")
        if os.path.exists(lib):
            exe = os.path.join(tmp, "cublas_gemm")
            subprocess.run([nvcc, "-O2", "-I", include, "-o", exe, os.path.join(src, "cublas_gemm.cu"),
                            "-lcublas"], check=True)
            ev = profile(profsh, exe, tmp)
            gemm = [e for e in ev if e.get("cat") == "kernel" and "gemm" in e["name"].lower()]
            check(len(gemm) >= 5, "cuBLAS: at least 5 gemm kernels (%d)" % len(gemm))
        else:
            print("cuBLAS not found beside nvcc: its program is not run")
    print("%d failed" % len(failures) if failures else "all passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
