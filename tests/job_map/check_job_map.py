#!/usr/bin/env python3
"""`profsh job map` on a real local Dask cluster and with local processes.

A dask-scheduler and two dask-worker processes (no nanny: a killed worker stays dead) listen on
127.0.0.1 at free ports; the test starts them and stops them after, also when it fails (and they
die with it if it is killed: PR_SET_PDEATHSIG). The job: 16 synthetic ranks with steps, kernels
and all-reduces (tests/critical_path_ranks/make_job.py). The reference: `profsh summarize` of each
trace, one by one. "The same result" is every table of every rank's summary, row for row.

  - --dask: the 16 summaries equal the reference; the progress line counts 16/16.
  - A worker killed while it runs a rank: the rank is run again on the other worker, and the
    result is the same. The rank's trace is a FIFO, so its summarize blocks until the test has
    killed the worker holding it and the rerun has opened it (no timing guess).
  - A summarize process killed under a worker: Dask's retry runs it again; --retries 0 reports it.
  - A corrupt rank trace: named in the report with summarize's message, exit 1, the 15 others
    summarized and reduced (rank 5 said missing, rank 9 the straggler).
  - The reduce of the --dask summaries (also after a worker was killed) equals profsh.load_ranks
    on the traces, figure for figure (tests/summaries/compare.lua: every analysis, every
    alignment), and the reduce profsh prints after the map names the straggler.
  - --local 4: the same summaries, named rank-R.summary.sqlite; a killed child is retried
    (--retries 0: reported as killed by signal 9); the corrupt trace named, the others
    summarized; two traces of one rank named.
  - A trace holding several ranks (ranks 0-3 merged into one file by load_ranks, whose
    processes are labelled "rank N"): mapped with the other 12, it gives the 4 summaries that
    `profsh summarize` of it gives, and the reduce sees 16 ranks; with rank 3's own trace
    beside it, "rank 3 twice" names both (--local and --dask).
  - --dask with a scheduler no worker joins: exit 1 after --worker-timeout, naming the address.
  - --local's children end with it: a temporary file it cannot make (RLIMIT_NOFILE) after some
    children started, and profsh job map itself killed, leave no summarize running.
  - Usage: --dask and --local together, no -o, an unreachable scheduler, a Python without Dask.

Usage: check_job_map.py PROFSH MAKE_JOB_PY
"""
import ctypes
import glob
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time

RANKS = 16
LATE = 9  # the rank late to every all-reduce
TAIL = 11  # the rank whose steps grow 40 us a step
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def die_with_parent():
    # The cluster must not outlive a test that is killed (ctest's timeout).
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class DaskCluster:
    """dask-scheduler and dask-worker processes on 127.0.0.1, each in a process group of its own
    (killing a worker's group kills the summarize it runs)."""

    def __init__(self, work, workers=2):
        self.work = work
        os.makedirs(work, exist_ok=True)
        self.logs = []
        self.scheduler_file = os.path.join(work, "scheduler.json")
        for tool in ("dask-scheduler", "dask-worker"):
            if shutil.which(tool) is None:
                raise RuntimeError("%s is missing: apt-get install python3-distributed "
                                   "(./build.sh test installs it)" % tool)
        self.scheduler = self._start("scheduler", ["dask-scheduler", "--host", "127.0.0.1",
                                                   "--port", "0", "--no-dashboard",
                                                   "--scheduler-file", self.scheduler_file])
        deadline = time.time() + 60
        while not os.path.exists(self.scheduler_file):
            if time.time() > deadline or self.scheduler.poll() is not None:
                raise RuntimeError("dask-scheduler did not start: " + self.log_tail())
            time.sleep(0.2)
        time.sleep(0.2)  # the file is written whole, but give it a moment
        with open(self.scheduler_file) as f:
            self.address = json.load(f)["address"]
        self.workers = [self.add_worker() for _ in range(workers)]

    def _start(self, name, argv):
        log = open(os.path.join(self.work, "%s-%d.log" % (name, len(self.logs))), "w+")
        self.logs.append(log)
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=self.work,
                                start_new_session=True, preexec_fn=die_with_parent)

    def add_worker(self):
        log_index = len(self.logs)
        worker = self._start("worker", [
            "dask-worker", "--scheduler-file", self.scheduler_file, "--host", "127.0.0.1",
            "--nthreads", "1", "--no-nanny", "--no-dashboard", "--death-timeout", "60",
            "--local-directory", os.path.join(self.work, "worker-%d" % log_index)])
        deadline = time.time() + 60
        while True:
            self.logs[log_index].seek(0)
            if "Registered to" in self.logs[log_index].read():
                return worker
            if time.time() > deadline or worker.poll() is not None:
                raise RuntimeError("dask-worker did not register: " + self.log_tail())
            time.sleep(0.2)

    def kill_worker(self, pid):
        os.killpg(pid, signal.SIGKILL)
        for w in self.workers:
            if w.pid == pid:
                w.wait()
        self.workers = [w for w in self.workers if w.pid != pid]

    def log_tail(self):
        text = ""
        for log in self.logs:
            log.seek(0)
            text += "\n".join(log.read().splitlines()[-5:]) + "\n"
        return text

    def stop(self):
        for p in self.workers + [self.scheduler]:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in self.workers + [self.scheduler]:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for log in self.logs:
            log.close()


# --- summaries -------------------------------------------------------------------------------

def tables(path):
    """Every table of a summary file, its rows sorted: {table: [row, ...]}."""
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        names = [r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {n: sorted(db.execute('SELECT * FROM "%s"' % n).fetchall(), key=repr)
                for n in names}
    finally:
        db.close()


def summaries_by_rank(folder):
    """{rank: tables} of every summary in `folder` (the rank read from its rank table)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.sqlite"))):
        t = tables(path)
        rank = t["rank"][0][0]
        if rank in out:
            raise RuntimeError("rank %d twice in %s" % (rank, folder))
        out[rank] = t
    return out


def same_as_reference(folder, reference, ranks, what):
    got = summaries_by_rank(folder)
    check(sorted(got) == sorted(ranks), "%s: summaries of ranks %s (got %s)" %
          (what, sorted(ranks), sorted(got)))
    differing = [r for r in ranks if r in got and got[r] != reference[r]]
    check(not differing and got, "%s: every table of every rank equals summarize's own "
          "(differing ranks: %s)" % (what, differing))
    names = sorted(os.listdir(folder))
    check(names == sorted("rank-%d.summary.sqlite" % r for r in ranks),
          "%s: nothing but rank-R.summary.sqlite in the folder (%s)" % (what, names))


def reduce_equals_load_ranks(profsh, trace_dir, folder, what):
    """tests/summaries/compare.lua (sumreduce's): every analysis of load_summaries over `folder`
    beside load_ranks over the traces, for each alignment, cell by cell."""
    compare = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "summaries", "compare.lua")
    p = subprocess.run([profsh, compare, trace_dir, folder], capture_output=True, text=True)
    lines = p.stdout.splitlines()
    diffs = [l for l in lines if l.startswith("DIFF") or " DIFF " in l]
    same = [l for l in lines if l.startswith("SAME")]
    check(p.returncode == 0 and not diffs and len(same) >= 10,
          "%s: the reduce of the map's summaries equals load_ranks on the traces, figure for "
          "figure (%d analyses the same; %s %s)" % (what, len(same), diffs[:3], p.stderr[-300:]))


# --- processes -------------------------------------------------------------------------------

def summarize_processes(trace):
    """{pid: parent pid} of the `profsh summarize TRACE` processes running now."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if b"summarize" in argv and trace.encode() in argv and fields[0] != "Z":
            found[int(entry)] = int(fields[1])
    return found


def wait_for(predicate, what, timeout=90):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise RuntimeError("timed out waiting for " + what)


class FifoTrace:
    """Replaces a trace by a FIFO of the same path: a summarize of it blocks in open() until the
    test writes the trace into it."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.content = f.read()
        self.saved = path + ".saved"
        os.rename(path, self.saved)
        os.mkfifo(path)

    def feed(self, timeout=90):
        """Writes the trace to the next reader that opens the FIFO."""
        deadline = time.time() + timeout
        while True:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:  # ENXIO: no reader yet
                if time.time() > deadline:
                    raise RuntimeError("nobody opened " + self.path)
                time.sleep(0.05)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "wb") as f:
            f.write(self.content)

    def restore(self):
        os.unlink(self.path)
        os.rename(self.saved, self.path)


def kill_and_wait_for_rerun(trace, pids, kill=None):
    """Kills `pids` (or calls `kill`), waits until none of them is alive and a new summarize of
    `trace` runs: a FIFO fed before would go to a dying reader and be lost."""
    if kill:
        kill()
    else:
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not set(summarize_processes(trace)) & set(pids), "the killed summarize to end")
    return wait_for(lambda: {p: q for p, q in summarize_processes(trace).items() if p not in pids},
                    "%s summarized again" % trace)


def start_map(profsh, args, out, preexec_fn=None):
    shutil.rmtree(out, ignore_errors=True)
    return subprocess.Popen([profsh, "job", "map"] + args + ["-o", out], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn)


def finish(proc, timeout=300):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, out, err


def run_map(profsh, args, out, timeout=300):
    return finish(start_map(profsh, args, out), timeout)


# --- the scenarios ---------------------------------------------------------------------------

MERGED_RANKS = 4  # ranks 0..3 in one trace


class MultiRank:
    """Ranks 0..3 in one trace (load_ranks' merge, its processes labelled "rank N") and its
    reference: `profsh summarize` of it, a folder of one summary per rank."""

    def __init__(self, profsh, work, traces, reference):
        self.trace = os.path.join(work, "multi", "ranks-0-3.json")
        os.makedirs(os.path.dirname(self.trace))
        p = subprocess.run([profsh, "-e", "profsh.load_ranks({arg[2], arg[3], arg[4], arg[5]})"
                            ":export_chrome_trace(arg[1])", "--", self.trace] +
                           traces[:MERGED_RANKS], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("cannot merge ranks 0-3: " + p.stderr)
        folder = os.path.join(work, "multi", "reference")
        p = subprocess.run([profsh, "summarize", self.trace, "-o", folder], capture_output=True,
                           text=True)
        self.reference = dict(reference)
        self.reference.update(summaries_by_rank(folder) if p.returncode == 0 else {})
        check(p.returncode == 0 and sorted(os.listdir(folder)) ==
              ["rank-%d.summary.sqlite" % r for r in range(MERGED_RANKS)],
              "profsh summarize of the merged trace writes ranks 0-3 (%s)" % p.stderr[-300:])


def check_multi_rank(profsh, work, traces, multi, where, what):
    out = os.path.join(work, "multi-map")
    rest = traces[MERGED_RANKS:]
    rc, stdout, err = run_map(profsh, where + [multi.trace] + rest, out)
    n = 1 + len(rest)
    check(rc == 0 and "%d/%d traces done" % (n, n) in err and
          "%d of %d traces summarized, %d rank summaries written" % (n, n, RANKS) in err,
          "%s: a trace of 4 ranks and 12 others: 13 traces, 16 rank summaries (%d: %s)" %
          (what, rc, err[-600:]))
    same_as_reference(out, multi.reference, range(RANKS), what + ", a trace of 4 ranks")
    check("reduce of %d ranks," % RANKS in stdout and "straggler: rank %d," % LATE in stdout,
          "%s: the reduce sees the 16 ranks (%s)" % (what, stdout[:300]))
    # Rank 3 in the merged trace and in its own: whichever is placed second is refused.
    rc, _, err = run_map(profsh, where + [multi.trace] + traces[3:], out)
    named = [l for l in err.splitlines() if "rank 3 twice: " in l]
    check(rc == 1 and len(named) == 1 and multi.trace in named[0] and traces[3] in named[0],
          "%s: rank 3 in a trace of 4 ranks and in its own trace is named (%d: %s)" %
          (what, rc, err[-600:]))
    got = summaries_by_rank(out)
    check(all(got.get(r) == multi.reference[r] for r in range(MERGED_RANKS, RANKS)),
          "%s: the ranks of the other traces are placed all the same (%s)" % (what, sorted(got)))


def check_no_worker(profsh, work, traces):
    """A scheduler that no worker joins: the map ends after --worker-timeout, naming it."""
    cluster = DaskCluster(os.path.join(work, "lonely"), workers=0)
    try:
        started = time.time()
        proc = start_map(profsh, ["--dask", cluster.address, "--worker-timeout", "3"] +
                         traces[:2], os.path.join(work, "lonely-out"))
        try:
            rc, _, err = finish(proc, 90)
        except subprocess.TimeoutExpired:
            rc, err = None, "still waiting after 90 s"
        took = time.time() - started
        check(rc == 1 and ("no worker joined the Dask scheduler at %s within 3 s" %
                           cluster.address) in err and took < 60,
              "--dask: a scheduler without workers ends the map after --worker-timeout 3, exit 1 "
              "(%s in %.0f s: %s)" % (rc, took, err[-400:]))
    finally:
        cluster.stop()


def blocked_traces(work, count):
    """FIFOs named like traces that nobody feeds: a summarize of one blocks until killed."""
    folder = os.path.join(work, "blocked")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    paths = [os.path.join(folder, "rank-%d.json" % r) for r in range(count)]
    for path in paths:
        os.mkfifo(path)
    return paths


def leftover_summarizes(paths):
    """The summarize processes of `paths` still running; killed, so that a failing check does
    not leave them behind."""
    left = {}
    for path in paths:
        left.update(summarize_processes(path))
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return left


def check_local_children_end(profsh, work):
    """--local's children do not outlive it: an error after some started, or it killed."""
    import resource

    fifos = blocked_traces(work, 8)
    out = os.path.join(work, "children")

    # Room for a few temporary files (one per child's standard error), not eight: the map fails
    # with children running, blocked opening their FIFOs.
    def few_files():
        resource.setrlimit(resource.RLIMIT_NOFILE, (7, 7))

    proc = start_map(profsh, ["--local", "8"] + fifos, out, preexec_fn=few_files)
    try:
        rc, _, err = finish(proc, 60)
    except subprocess.TimeoutExpired:
        rc, err = None, "still running after 60 s"
    time.sleep(1)  # a child left behind has then exec'd summarize (its argv names the trace)
    left = leftover_summarizes(fifos)
    check(rc == 1 and "cannot make a temporary file: Too many open files" in err,
          "--local: a temporary file it cannot make ends the map, exit 1 (%s: %s)" %
          (rc, err[-400:]))
    check(not left, "--local: no summarize child outlives the failed map (left: %s)" % left)

    proc = start_map(profsh, ["--local", "4"] + fifos, out)
    def children():
        found = {p for path in fifos for p, q in summarize_processes(path).items()
                 if q == proc.pid}
        return found if len(found) == 4 else None

    running = wait_for(children, "4 summarize children")
    proc.kill()
    proc.communicate()
    try:
        wait_for(lambda: not any(summarize_processes(path) for path in fifos),
                 "the children to end", timeout=10)
    except RuntimeError:
        pass
    left = leftover_summarizes(fifos)
    check(len(running) == 4 and not left,
          "--local: profsh job map killed, its %d summarize children end with it (left: %s)" %
          (len(running), left))

def check_dask(profsh, work, traces, reference, multi):
    cluster = DaskCluster(os.path.join(work, "cluster"))
    try:
        dask = ["--dask", cluster.address]
        out = os.path.join(work, "dask")
        rc, stdout, err = run_map(profsh, dask + traces, out)
        check(rc == 0, "--dask: 16 ranks mapped, exit 0 (%d: %s)" % (rc, err[-800:]))
        check("16/16 traces done" in err and "(2 workers)" in err,
              "--dask: the progress line counts 16/16 traces on 2 workers (%s)" % err[-400:])
        same_as_reference(out, reference, range(RANKS), "--dask")
        reduce_equals_load_ranks(profsh, os.path.dirname(traces[0]), out, "--dask")
        check("reduce of 16 ranks" in stdout and "straggler: rank %d," % LATE in stdout and
              "slowest rank per step: rank %d in 5 of 6 steps" % TAIL in stdout and
              "drifting ranks: %d (" % TAIL in stdout,
              "--dask: the reduce where profsh runs names rank %d the straggler, rank %d the "
              "slowest and drifting (%s)" % (LATE, TAIL, stdout))

        # A summarize process killed under its worker: an error of the task, retried by Dask.
        fifo = FifoTrace(traces[3])
        try:
            proc = start_map(profsh, dask + traces, out)
            first = wait_for(lambda: summarize_processes(traces[3]), "rank 3's summarize")
            kill_and_wait_for_rerun(traces[3], list(first))
            fifo.feed()
            rc, _, err = finish(proc)
        finally:
            fifo.restore()
        check(rc == 0, "--dask: a summarize killed under its worker is retried, exit 0 (%d: %s)"
              % (rc, err[-800:]))
        same_as_reference(out, reference, range(RANKS), "--dask, summarize killed")

        fifo = FifoTrace(traces[3])
        try:
            proc = start_map(profsh, dask + ["--retries", "0"] + traces, out)
            first = wait_for(lambda: summarize_processes(traces[3]), "rank 3's summarize")
            os.kill(next(iter(first)), signal.SIGKILL)
            rc, _, err = finish(proc)
        finally:
            fifo.restore()
        check(rc == 1 and "1 trace not summarized (a failing summarize is tried 1 time)" in err and
              "%s: " % traces[3] in err and "killed by signal 9" in err,
              "--dask --retries 0: the killed rank is reported by its trace (%d: %s)" %
              (rc, err[-800:]))
        same_as_reference(out, reference, [r for r in range(RANKS) if r != 3],
                          "--dask --retries 0")

        # A worker killed while it runs rank 7: the scheduler gives the rank to the other one.
        fifo = FifoTrace(traces[7])
        try:
            proc = start_map(profsh, dask + traces, out)
            first = wait_for(lambda: summarize_processes(traces[7]), "rank 7's summarize")
            holder = next(iter(first.values()))
            check(holder in [w.pid for w in cluster.workers],
                  "rank 7's summarize runs under a dask-worker")
            rerun = kill_and_wait_for_rerun(traces[7], list(first),
                                            lambda: cluster.kill_worker(holder))
            check(set(rerun.values()) == {cluster.workers[0].pid},
                  "rank 7 runs again, on the worker left")
            fifo.feed()
            rc, _, err = finish(proc)
        finally:
            fifo.restore()
        check(rc == 0, "--dask: a worker killed mid-map, exit 0 (%d: %s)" % (rc, err[-800:]))
        same_as_reference(out, reference, range(RANKS), "--dask, a worker killed")
        reduce_equals_load_ranks(profsh, os.path.dirname(traces[0]), out,
                                 "--dask, a worker killed")

        cluster.workers.append(cluster.add_worker())
        check_corrupt(profsh, work, traces, reference, dask, "--dask")
        check_multi_rank(profsh, work, traces, multi, dask, "--dask")

        # Mistakes: an address where no scheduler listens; a Python without Dask.
        rc, _, err = run_map(profsh, ["--dask", "tcp://127.0.0.1:9"] + traces[:2], out, 120)
        check(rc == 1 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err,
              "--dask: an address without a scheduler is named, exit 1 (%d: %s)" % (rc, err[-400:]))
        no_dask = os.path.join(work, "python-without-dask")
        with open(no_dask, "w") as f:
            f.write("#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n")
        os.chmod(no_dask, 0o755)
        rc, _, err = run_map(profsh, dask + ["--python", no_dask] + traces[:2], out)
        check(rc == 1 and "apt-get install python3-distributed" in err,
              "--dask: a Python without Dask says what to install, exit 1 (%d: %s)" %
              (rc, err[-400:]))
    finally:
        cluster.stop()


def check_corrupt(profsh, work, traces, reference, where, what):
    corrupt = traces[5]
    saved = corrupt + ".saved"
    os.rename(corrupt, saved)
    try:
        with open(saved, "rb") as f:
            head = f.read(3000)
        with open(corrupt, "wb") as f:
            # Cut in the middle of the events and followed by garbage: a cut alone is repaired.
            f.write(head + b"@@@ not JSON")
        out = os.path.join(work, "corrupt")
        rc, stdout, err = run_map(profsh, where + traces, out)
    finally:
        os.replace(saved, corrupt)
    check("reduce of 15 ranks (missing: 5)" in stdout and "straggler: rank %d," % LATE in stdout,
          "%s: the other 15 ranks are reduced (%s)" % (what, stdout))
    check(rc == 1, "%s: a corrupt rank trace makes the map exit 1 (%d)" % (what, rc))
    lines = [l for l in err.splitlines() if l.startswith("  %s: " % corrupt)]
    check(len(lines) == 1 and "profsh summarize" in lines[0] and "exit status 1" in lines[0],
          "%s: the report names the corrupt trace with summarize's message (%s)" %
          (what, err[-800:]))
    check("15 of 16 traces summarized, 15 rank summaries written" in err and
          "15/16 traces done, 1 failed" in err,
          "%s: 15 of 16 ranks summarized (%s)" % (what, err[-400:]))
    same_as_reference(out, reference, [r for r in range(RANKS) if r != 5], what + ", corrupt rank")


def check_local(profsh, work, traces, reference, multi):
    out = os.path.join(work, "local")
    rc, _, err = run_map(profsh, ["--local", "4"] + traces, out)
    check(rc == 0 and "16/16 traces done" in err, "--local 4: 16 ranks, exit 0 (%d: %s)" %
          (rc, err[-400:]))
    same_as_reference(out, reference, range(RANKS), "--local 4")

    # Ranks 8-15 mapped again into the same folder: the reduce reads what this map wrote, not
    # the summaries of ranks 0-7 left there, says the ranks missing, and the map succeeded.
    rc, stdout, err = run_map(profsh, ["--local", "4"] + traces[8:], out)
    check(rc == 0 and "reduce of 8 ranks (missing: 0, 1, 2, 3, 4, 5, 6, 7)" in stdout,
          "--local: the reduce reads only this map's summaries, the ranks before them missing "
          "(%d: %s)" % (rc, (stdout + err)[-400:]))

    for retries, expect_rc in (("2", 0), ("0", 1)):
        fifo = FifoTrace(traces[11])
        try:
            proc = start_map(profsh, ["--local", "4", "--retries", retries] + traces, out)
            first = wait_for(lambda: summarize_processes(traces[11]), "rank 11's summarize")
            check(set(first.values()) == {proc.pid}, "--local: summarize runs as profsh's child")
            if expect_rc == 0:
                kill_and_wait_for_rerun(traces[11], list(first))
                fifo.feed()
            else:
                os.kill(next(iter(first)), signal.SIGKILL)
            rc, _, err = finish(proc)
        finally:
            fifo.restore()
        if expect_rc == 0:
            check(rc == 0, "--local: a killed summarize is retried, exit 0 (%d: %s)" %
                  (rc, err[-400:]))
            same_as_reference(out, reference, range(RANKS), "--local, a child killed")
        else:
            check(rc == 1 and ("  %s: " % traces[11]) in err and "killed by signal 9" in err,
                  "--local --retries 0: the killed rank is reported by its trace (%d: %s)" %
                  (rc, err[-400:]))
    check_corrupt(profsh, work, traces, reference, ["--local", "4"], "--local")
    check_multi_rank(profsh, work, traces, multi, ["--local", "4"], "--local")
    check_local_children_end(profsh, work)

    # Two traces of one rank: the second one is named with the first, the others are placed.
    twice = traces + [os.path.join(os.path.dirname(traces[3]), ".", "rank-3.json")]
    rc, _, err = run_map(profsh, ["--local", "4"] + twice, out)
    check(rc == 1 and ("rank 3 twice: %s and %s" % (traces[3], traces[3])) in err,
          "--local: two traces of rank 3 are named (%d: %s)" % (rc, err[-400:]))
    same_as_reference(out, reference, range(RANKS), "--local, rank 3 twice")


def check_usage(profsh, work, traces):
    out = os.path.join(work, "usage")
    for args, message in (
            (["--dask", "tcp://127.0.0.1:8786", "--local", "2"] + traces, "one of them"),
            (["--local", "2"] + traces[:1], "no -o DIR"),
            (["--local", "0"], "positive whole number"),
            (["--local", "2", "--python", "/usr/bin/python3"] + traces, "options of --dask"),
            (["--local", "2", "--worker-timeout", "5"] + traces, "options of --dask"),
            (["--dask", "tcp://127.0.0.1:8786", "--worker-timeout", "0"] + traces,
             "positive whole number")):
        argv = [profsh, "job", "map"] + args + ([] if message == "no -o DIR" else ["-o", out])
        p = subprocess.run(argv, capture_output=True, text=True)
        check(p.returncode == 2 and message in p.stderr,
              "usage error '%s': exit 2 (%d: %s)" % (message, p.returncode, p.stderr.strip()))


def main():
    profsh, make_job = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="profsh_job_map_") as work:
        trace_dir = os.path.join(work, "traces")
        subprocess.run([sys.executable, make_job, trace_dir, "--ranks", str(RANKS), "--steps",
                        "6", "--late-rank", str(LATE), "--tail-rank", str(TAIL),
                        "--tail-us-per-step", "40"], check=True)
        traces = [os.path.join(trace_dir, "rank-%d.json" % r) for r in range(RANKS)]
        ref_dir = os.path.join(work, "reference")
        os.makedirs(ref_dir)
        for r, trace in enumerate(traces):
            subprocess.run([profsh, "summarize", trace, "-o",
                            os.path.join(ref_dir, "rank-%d.summary.sqlite" % r)],
                           check=True, capture_output=True)
        reference = summaries_by_rank(ref_dir)
        check(sorted(reference) == list(range(RANKS)), "the reference has the 16 ranks")
        multi = MultiRank(profsh, work, traces, reference)
        check_usage(profsh, work, traces)
        check_local(profsh, work, traces, reference, multi)
        check_no_worker(profsh, work, traces)
        check_dask(profsh, work, traces, reference, multi)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
