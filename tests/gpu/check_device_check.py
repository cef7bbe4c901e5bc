#!/usr/bin/env python3
"""tests/gpu/device_check.sh where there is no GPU, and its torch checks on the CPU.

  check_device_check.py no-gpu PROFSH
      Without a GPU (nvidia-smi missing from PATH, or one that lists no device) the script runs to
      the end in seconds, reports every GPU check COULD NOT RUN with the reason, runs its
      comparison self-test, and exits 3; its summary goes to $OUT, --summary or ./; a tarball or a
      folder with bin/profsh is taken as BUNDLE; a failed check makes it exit 1; bad BUNDLE 2.
  check_device_check.py cpu PROFSH CACHE
      In the Debian 13 root (torch 2.6, tests/torch2/debian13_root.sh; exit 77 without it), with
      DEVICE_CHECK_TORCH_DEVICE=cpu: profsh's operators equal torch.profiler's per name on the
      training loop, the schedule's and the on-demand request's windows hold the whole run's
      steps, the flight recorder's dump on demand holds steps and operators, the added time is
      measured; the GPU-only checks could not run; exit 3.
"""
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "device_check.sh")
GPU_CHECKS = [
    "CUDA programs (tests/gpu/*.cu under profsh run --activities nvtx,cuda, expected counts)",
    "operator source for this torch", "operator counts per name", "kernel counts per name",
    "CUDA runtime calls per name",
    "kernels inside their launching operators (profsh)", "CUDA time per operator within 2 %",
    "added time per kernel launch (none vs torch.profiler vs profsh)",
    "schedule windows (profsh run --schedule)", "on-demand window (profsh trace --pid)",
    "flight recorder dump on demand and watchdog"]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def results(text):
    """{check name: (status, detail)} of a summary's result lines."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(PASS|FAIL|COULD NOT RUN|NOT IN BUILD) +(.+?): (.*)$", line)
        if m:
            out[m.group(2)] = (m.group(1), m.group(3))
    return out


def executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def run(args, env_extra, cwd, timeout=120, path=None):
    env = dict(os.environ)
    env.pop("OUT", None)
    env.update(env_extra)
    if path is not None:
        env["PATH"] = path
    start = time.monotonic()
    r = subprocess.run(["bash", SCRIPT] + args, cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return r, time.monotonic() - start


def expect_no_gpu(r, seconds, summary_path, reason, what):
    check(r.returncode == 3, "%s: exit status 3 (%d; %s)" % (what, r.returncode, r.stderr[-300:]))
    check(seconds < 60, "%s: done in %.1f s" % (what, seconds))
    check(r.stdout.rstrip().endswith("summary: " + summary_path),
          "%s: prints the summary's path %s" % (what, summary_path))
    if not os.path.exists(summary_path):
        check(False, "%s: summary written to %s" % (what, summary_path))
        return
    text = open(summary_path).read()
    got = results(text)
    wrong = [(n, got.get(n)) for n in GPU_CHECKS if got.get(n) != ("COULD NOT RUN", reason)]
    check(not wrong, "%s: every GPU check COULD NOT RUN: %s (wrong: %s)" % (what, reason, wrong[:3]))
    check(got.get("comparison logic self-test", ("?",))[0] == "PASS", "%s: the self-test passed" % what)
    check(got.get("flight recorder with CUDA", ("?",))[0] == "COULD NOT RUN",
          "%s: the flight recorder's trigger check could not run" % what)
    check("totals: 1 PASS, 0 FAIL, 12 COULD NOT RUN, 0 NOT IN BUILD" in text
          and "exit status 3: nothing failed, but some checks could not run" in text,
          "%s: totals and exit status in the summary" % what)
    check(re.search(r"^profsh: /\S+profsh: profsh \d", text, re.M) is not None,
          "%s: profsh's absolute path and --version in the summary" % what)
    packed = summary_path[:-len(".txt")] + "_files.tar.gz"
    try:
        with tarfile.open(packed) as t:
            names = t.getnames()
    except (OSError, tarfile.TarError) as e:
        names = ["unreadable: %s" % e]
    base = os.path.basename(packed)[:-len(".tar.gz")]
    check(any(n.startswith(base + "/") and n.endswith(".log") for n in names)
          and not any("/bundle/" in n for n in names),
          "%s: the logs packed in %s, without the bundle (%s)" % (what, packed, names[:4]))


def no_gpu(profsh):
    profsh = os.path.abspath(profsh)
    with tempfile.TemporaryDirectory(prefix="profsh-devcheck-") as tmp:
        # A driver's nvidia-smi on a machine whose GPU is gone lists none and exits non-zero.
        fake_bin = os.path.join(tmp, "fakebin")
        os.mkdir(fake_bin)
        executable(os.path.join(fake_bin, "nvidia-smi"), "#!/bin/sh\necho 'No devices were found'\nexit 6\n")
        out = os.path.join(tmp, "out")
        cwd = os.path.join(tmp, "cwd")
        os.mkdir(out)
        os.mkdir(cwd)
        path = fake_bin + os.pathsep + os.environ["PATH"]
        r, s = run([profsh], {"OUT": out}, cwd, path=path)
        expect_no_gpu(r, s, os.path.join(out, "device_check_summary.txt"),
                      "nvidia-smi lists no CUDA device (No devices were found)", "with $OUT")
        check(not os.listdir(cwd), "with $OUT: nothing written in the current folder (%s)" % os.listdir(cwd))

        if shutil.which("nvidia-smi") is None:
            r, s = run([os.path.relpath(profsh, cwd)], {}, cwd)
            expect_no_gpu(r, s, os.path.join(os.path.realpath(cwd), "device_check_summary.txt"),
                          "no nvidia-smi on PATH (no NVIDIA driver here)", "no nvidia-smi, relative BUNDLE")
        else:
            print("nvidia-smi is on PATH here: the run without it is left out")

        # BUNDLE as a tarball and as its unpacked folder: bin/profsh inside.
        tree = os.path.join(tmp, "profsh-0.1.0-linux-x86_64")
        os.makedirs(os.path.join(tree, "bin"))
        executable(os.path.join(tree, "bin", "profsh"), '#!/bin/sh\nexec "%s" "$@"\n' % profsh)
        tarball = tree + ".tar.gz"
        with tarfile.open(tarball, "w:gz") as t:
            t.add(tree, arcname=os.path.basename(tree))
        for bundle, what in ((tarball, "tarball"), (tree, "unpacked folder")):
            summary = os.path.join(tmp, what.replace(" ", "_") + ".txt")
            r, s = run(["--summary", summary, bundle], {}, cwd, path=path)
            expect_no_gpu(r, s, summary, "nvidia-smi lists no CUDA device (No devices were found)",
                          "BUNDLE as a " + what)
        unpacked = os.path.join(tmp, "tarball_files", "bundle", os.path.basename(tree), "bin", "profsh")
        check(os.path.isfile(unpacked), "the tarball is unpacked beside the summary (%s)" % unpacked)

        # A failed check (here the self-test, under a Python that fails everything) is exit 1.
        executable(os.path.join(fake_bin, "failing-python"), "#!/bin/sh\nexit 1\n")
        summary = os.path.join(tmp, "failing.txt")
        r, _ = run(["--summary", summary, profsh], {"DEVICE_CHECK_PYTHON": "failing-python"}, cwd, path=path)
        text = open(summary).read() if os.path.exists(summary) else ""
        check(r.returncode == 1 and results(text).get("comparison logic self-test", ("?",))[0] == "FAIL"
              and "exit status 1: a check failed" in text,
              "a failed check: exit status 1 and FAIL in the summary (%d)" % r.returncode)

        for args, why in (([os.path.join(tmp, "nothing-here")], "no executable profsh in"),
                          ([], "usage:"), (["--bogus", profsh], "unknown option --bogus")):
            r, _ = run(args, {}, cwd, path=path)
            check(r.returncode == 2 and why in r.stderr, "bad usage %s: exit 2 saying %r (%d: %s)"
                  % (args, why, r.returncode, r.stderr.strip()[-200:]))


def cpu(profsh, cache):
    root = subprocess.run([os.path.join(HERE, "..", "torch2", "debian13_root.sh")],
                          capture_output=True, text=True)
    if root.returncode != 0:
        print("skip: no Debian 13 root")
        return 77
    root = root.stdout.strip().splitlines()[-1]
    with tempfile.TemporaryDirectory(prefix="profsh-devcheck-cpu-") as tmp:
        summary = os.path.join(tmp, "summary.txt")
        # The budget is the GPU machine's 470 s plus room for this machine's two shared cores
        # (250 s seen at a load of 9); ctest's timeout is above it.
        env = dict(os.environ, PROFSH_CACHE=cache, PROFSH_TORCH_PREBUILT="0", DEVICE_CHECK_TORCH_DEVICE="cpu",
                   DEVICE_CHECK_PYTHON="/usr/bin/python3", DEVICE_CHECK_BUDGET_S="640")
        env.pop("OUT", None)
        r = subprocess.run([os.path.join(HERE, "..", "torch2", "in_root.sh"), root, "bash", SCRIPT, "--summary",
                            summary, os.path.abspath(profsh)], env=env, capture_output=True, text=True,
                           timeout=600, cwd=tmp)
        print(r.stdout[-4000:], r.stderr[-2000:])
        text = open(summary).read() if os.path.exists(summary) else ""
        got = results(text)
        check(r.returncode == 3, "exit status 3: the GPU checks could not run (%d)" % r.returncode)
        for name in ("comparison logic self-test", "operator source for this torch", "operator counts per name",
                     "added time per operator (none vs torch.profiler vs profsh)",
                     "schedule windows (profsh run --schedule)", "on-demand window (profsh trace --pid)",
                     "flight recorder dump on demand and watchdog"):
            check(got.get(name, ("?",))[0] == "PASS", "%s: PASS (%s)" % (name, got.get(name)))
        check(re.search(r"^PASS +flight recorder dump on demand and watchdog: a dump on demand of \d+ steps: [1-9]\d* operators, 0 kernels",
                        text, re.M) is not None, "the flight recorder's dump on the CPU holds steps and operators")
        check(re.search(r"^PASS +operator counts per name: \d+ names, \d+ operators, equal$", text, re.M)
              is not None, "the operator counts are compared, not empty")
        check(len(re.findall(r"^    PASS window .*schedule\.\d+\.[01]\.json: steps [26], [37]: \d+ operators as in the reference$",
                             text, re.M)) == 2, "the schedule's two windows: steps 2-3 and 6-7")
        check(re.search(r"added per operator: torch.profiler -?[\d.]+ us, profsh -?[\d.]+ us", text) is not None,
              "the added time per operator is printed")
        want = "DEVICE_CHECK_TORCH_DEVICE=cpu: no GPU work"
        for name in ("kernel counts per name", "CUDA runtime calls per name",
                     "kernels inside their launching operators (profsh)",
                     "CUDA time per operator within 2 %"):
            check(got.get(name) == ("COULD NOT RUN", want), "%s: COULD NOT RUN on the CPU (%s)" % (name, got.get(name)))
    return 0


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("no-gpu", "cpu"):
        print(__doc__, file=sys.stderr)
        return 2
    if sys.argv[1] == "no-gpu":
        no_gpu(sys.argv[2])
    elif cpu(sys.argv[2], sys.argv[3]) == 77:
        return 77
    print("%d failed" % len(failures) if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
