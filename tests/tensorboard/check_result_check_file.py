#!/usr/bin/env python3
"""The harness against the plugin's own expected output: kineto 041e7ce's
tb_plugin/test/result_check_file.txt, which its end-to-end test (test_tensorboard_end2end.py)
compares with TensorBoard's answers on the two sample runs. The same ten requests, in the same
order, made through the harness must give that file byte for byte (each answer one line, as the
test's regeneration mode writes it).

usage: check_result_check_file.py   (exit 77: the kineto clone or pandas/werkzeug is missing)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tb_harness  # noqa: E402

# test_tensorboard_end2end.py's expected_links_format, with the run's name for {}.
REQUESTS = [
    ("overview", {"view": "Overview"}),
    ("operation", {"view": "Operator", "group_by": "Operation"}),
    ("operation/table", {"view": "Operator", "group_by": "Operation"}),
    ("kernel/table", {"view": "Kernel", "group_by": "Kernel"}),
    ("kernel", {"view": "Kernel", "group_by": "Kernel"}),
]
RUNS = ["resnet50_num_workers_0", "resnet50_num_workers_4"]


def main():
    try:
        samples = tb_harness.sample_runs_dir()
        expected_path = os.path.join(tb_harness.plugin_dir(), "test", "result_check_file.txt")
        with tb_harness.Plugin(samples) as plugin:
            if plugin.runs() != RUNS:
                print(f"runs: {plugin.runs()}, expected {RUNS}")
                return 1
            produced = b""
            for run in RUNS:
                for route, params in REQUESTS:
                    produced += plugin.get(route, run=run, worker="worker0", span="1", **params)
                    produced += b"\n"
    except tb_harness.PluginUnavailable as e:
        print(f"skipped: {e}")
        return 77
    with open(expected_path, "rb") as f:
        expected = f.read()
    if produced == expected:
        print(f"result_check_file.txt reproduced byte for byte ({len(expected)} bytes)")
        return 0
    for number, (got, want) in enumerate(zip(produced.split(b"\n"), expected.split(b"\n")), 1):
        if got != want:
            at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            print(f"line {number} differs at byte {at}: got ...{got[max(0, at - 80):at + 80]!r}\n"
                  f"expected ...{want[max(0, at - 80):at + 80]!r}")
            return 1
    print(f"lengths differ: produced {len(produced)} bytes, expected {len(expected)}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
