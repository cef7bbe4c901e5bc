#!/usr/bin/env python3
"""The release bundle beside the build tree: its size, and the start-up time of
`profsh --version` and of loading a trace (a small and a large shared GPU trace), medians of
RUNS runs each, the two programs alternating so that the machine's load hits both alike.

  python3 bench/bundle_bench.py TARBALL BUILD_DIR [RUNS]   (./build.sh dist makes TARBALL)
"""
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRACES = os.path.join(HERE, "..", "tests", "data", "kineto")
SMALL = "critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz"
LARGE = "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"


def seconds(argv):
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def tree_bytes(top):
    return sum(os.path.getsize(os.path.join(r, n)) for r, _, names in os.walk(top) for n in names)


def main():
    tarball, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 21
    with tempfile.TemporaryDirectory(prefix="profsh_bundle_bench_") as work:
        with tarfile.open(tarball) as t:
            t.extractall(work)
        top = os.path.join(work, os.path.basename(tarball)[:-len(".tar.gz")])
        programs = {"build tree": os.path.join(build, "profsh"), "bundle": os.path.join(top, "bin", "profsh")}
        cases = [("profsh --version", ["--version"])]
        for name in (SMALL, LARGE):
            path = os.path.join(TRACES, name)
            cases.append(("load %s (%.0f KB gz)" % (name[:24] + "...", os.path.getsize(path) / 1e3),
                          ["-e", "profsh.load(arg[1])", "--", path]))
        print("%-62s %14s %14s" % ("", "build tree", "bundle"))
        print("%-62s %14s %14s" % ("size: tarball (bytes)", "", os.path.getsize(tarball)))
        print("%-62s %14s %14s" % ("size: unpacked (bytes)", "", tree_bytes(top)))
        print("%-62s %14d %14d" % ("size: bin/profsh (bytes)", os.path.getsize(programs["build tree"]),
                                  os.path.getsize(programs["bundle"])))
        for label, argv in cases:
            times = {k: [] for k in programs}
            for _ in range(runs):
                for k, program in programs.items():
                    times[k].append(seconds([program] + argv))
            print("%-62s %12.1f ms %12.1f ms" % (label + ", median of %d" % runs,
                                                 statistics.median(times["build tree"]) * 1e3,
                                                 statistics.median(times["bundle"]) * 1e3))


if __name__ == "__main__":
    main()
