#!/usr/bin/env python3
"""Records the TensorBoard profiler plugin's views on whole run folders, as record_golden.py does
for single traces: each folder under RUNS_DIR (the NAMEs given, or all) is a run with its
workers' files as they are, so a folder with a file per rank gets the plugin's distributed view.
usage: record_runs_golden.py RUNS_DIR OUT_DIR [NAME ...]
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_golden  # noqa: E402
import tb_harness  # noqa: E402


def main():
    runs_dir, out = sys.argv[1:3]
    names = sys.argv[3:] or sorted(n for n in os.listdir(runs_dir)
                                   if os.path.isdir(os.path.join(runs_dir, n)))
    logdir = tempfile.mkdtemp(prefix="tb_runs_golden.")
    try:
        for name in names:
            os.symlink(os.path.abspath(os.path.join(runs_dir, name)), os.path.join(logdir, name))
        with tb_harness.Plugin(logdir) as plugin:
            for run in plugin.runs():
                record_golden.record_run(plugin, run, out)
                print(f"recorded {run}")
    finally:
        shutil.rmtree(logdir)


if __name__ == "__main__":
    main()
