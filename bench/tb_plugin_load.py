#!/usr/bin/env python3
"""The TensorBoard plugin's own parser on one trace (the benchmark's plugin side): RunLoader loads
a run folder holding the trace as worker0's file, as TensorBoard does (one parsing process, its
RunGenerator making every view: overview, operator, kernel, memory, module; then the
distributed view). The plugin runs through tests/tensorboard/tb_harness.py's stubs.

usage: tb_plugin_load.py TRACE
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tensorboard"))
import tb_harness  # noqa: E402


def main():
    trace = os.path.abspath(sys.argv[1])
    tb_harness.import_plugin()
    from torch_tb_profiler import io
    from torch_tb_profiler.profiler.loader import RunLoader
    with tempfile.TemporaryDirectory(prefix="tb_bench_") as work:
        run_dir = os.path.join(work, "run")
        os.mkdir(run_dir)
        suffix = ".pt.trace.json.gz" if trace.endswith(".gz") else ".pt.trace.json"
        os.symlink(trace, os.path.join(run_dir, "worker0" + suffix))
        cache = io.Cache(os.path.join(work, "cache"))
        run = RunLoader("run", run_dir, cache).load()
        profiles = run.get_profiles() or []
        print(f"plugin: {len(profiles)} profiles, views {[v.display_name for v in run.views]}")
        return 0 if profiles else 1


if __name__ == "__main__":
    sys.exit(main())
