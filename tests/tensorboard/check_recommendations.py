#!/usr/bin/env python3
"""The plugin's recommendations fire in profsh as they fire in the plugin: for every run in
golden/ (the shared traces and the plugin's two sample runs, recorded by record_golden.py), the
rule ids of t:recommendations()'s plugin rows equal, in order, the rules of the plugin's
recommendations.html (each of its texts told apart by how the plugin starts it). The one place
where profsh deliberately differs, memory_peak (the plugin compares the CPU's peak with the last
GPU's memory), is checked apart: no golden run reaches it, in the plugin or in profsh.

usage: check_recommendations.py PROFSH TRACES_DIR   (exit 77 without the kineto clone, which the
sample runs come from)
"""
import html
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tb_harness  # noqa: E402

# How data.py's analyze() starts each text, in its order.
PLUGIN_TEXTS = [
    ("This run has high time cost on input data loading.", "dataloader"),
    ("It is recommended to ", "data_parallel"),
    ("Nccl backend is currently the fastest", "ddp_backend"),
    ("This run has high time cost on communication.", "communication"),
    ("GPU ", "low_gpu_utilization"),
    ("Kernels with ", "tensor_cores"),
    ("Device memory usage is at the limit", "memory_peak"),
]

LUA = ("local rows = profsh.load(arg[1]):recommendations() local out = {} "
       "for _, r in ipairs(rows) do if r.source == 'plugin' then out[#out + 1] = r.rule end end "
       "print(table.concat(out, ','))")


def plugin_rules(path):
    text = open(path, encoding="utf-8").read()
    rules = []
    for item in re.findall(r"<li>(.*?)</li>", text, re.S):
        plain = html.unescape(re.sub(r"<[^>]*>", "", item))
        rule = next((r for prefix, r in PLUGIN_TEXTS if plain.startswith(prefix)), None)
        if rule is None:
            raise SystemExit(f"{path}: a recommendation this check does not know: {plain[:80]}")
        rules.append(rule)
    return rules


def runs(traces_dir, golden):
    """(golden folder of one worker and span, trace path) for every recorded run."""
    samples = tb_harness.sample_runs_dir()
    for run in sorted(os.listdir(golden)):
        folder = os.path.join(golden, run)
        if not os.path.isdir(folder):
            continue
        if os.path.isdir(os.path.join(samples, run)):
            files = sorted(f for f in os.listdir(os.path.join(samples, run)) if ".pt.trace.json" in f)
            for span, name in enumerate(files, 1):
                yield os.path.join(folder, f"worker0.{span}"), os.path.join(samples, run, name)
        else:
            trace = os.path.join(traces_dir, run + ".json.gz")
            if not os.path.exists(trace):
                raise SystemExit(f"{folder}: no trace {trace}")
            yield os.path.join(folder, "worker0.default"), trace


def main():
    profsh, traces_dir = sys.argv[1], sys.argv[2]
    try:
        all_runs = list(runs(traces_dir, os.path.join(HERE, "golden")))
    except tb_harness.PluginUnavailable as e:
        print(f"skipped: {e}")
        return 77
    failures = 0
    for folder, trace in all_runs:
        expected_path = os.path.join(folder, "recommendations.html")
        if not os.path.exists(expected_path):
            continue  # the plugin failed on the run (overview.error)
        expected = plugin_rules(expected_path)
        r = subprocess.run([profsh, "-e", LUA, "--", trace], capture_output=True, text=True)
        got = r.stdout.strip().split(",") if r.stdout.strip() else []
        ok = r.returncode == 0 and got == expected
        failures += not ok
        name = os.path.relpath(folder, HERE)
        print(f"{'ok  ' if ok else 'FAIL'} {name}: plugin {expected}, profsh {got}"
              + ("" if r.returncode == 0 else f" ({r.stderr.strip()[-300:]})"))
    print(f"{len(all_runs) - failures} of {len(all_runs)} runs give the plugin's recommendations")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
