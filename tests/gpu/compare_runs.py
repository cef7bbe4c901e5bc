#!/usr/bin/env python3
"""Compares a trace profsh recorded with one torch.profiler (Kineto) recorded of the same steps,
and checks the windows of a schedule or an on-demand request against a whole run. Standard
library only: it runs on the GPU machine's Python and here (tests/gpu/test_compare_runs.py).

  compare_runs.py pair PROFSH_TRACE KINETO_TRACE [--loop-range NAME] [--checks LIST]
                       [--cuda-time-tolerance 0.02] [--cuda-time-min-share 0.01]
      LIST (comma-separated, default all): operators, kernels, calls, launch-windows, cuda-time
  compare_runs.py windows REFERENCE_TRACE --steps N [--kernels] WINDOW_TRACE...
  compare_runs.py overhead --launches-from TRACE [--loop-range NAME] NONE_T KINETO_T PROFSH_T

Each check prints one line starting with PASS or FAIL, details indented below it; the exit
status is 1 when any check failed, 2 for unreadable input.

Definitions (docs/TESTING.md, "The GPU device check"):
- operators: complete events of category cpu_op or user_annotation (in a legacy export, which
  has no categories, every complete event), counted per name; kernels: category kernel, per name;
  calls: category cuda_runtime, per name (Kineto leaves its blocklisted queries out, and so must
  profsh).
- A kernel's launch is the cuda_runtime or cuda_driver event with its correlation id; its
  launching operator is the innermost cpu_op (else user_annotation) on the launch's thread that
  contains the launch. The kernel is inside that operator's window when the launch lies within
  the operator and the kernel starts no earlier than the launch began: after clock alignment a
  kernel cannot start before the call that launched it.
- CUDA time of an operator name: the summed durations of the kernels it launched (innermost, so
  nothing is counted twice). Both runs must launch the same kernels (count per kernel name)
  from each operator name; their CUDA time must agree within the tolerance, or 0.2 us per kernel
  where that is more (two processes time a microsecond kernel differently). Names below
  --cuda-time-min-share of the run's kernel time have their kernels compared, not their time.
- With --loop-range, a run is restricted to that range (one event of that name): operators
  starting inside it, kernels launched inside it.
"""
import argparse
import bisect
import collections
import gzip
import json
import re
import statistics
import sys

OPERATOR_CATEGORIES = ("cpu_op", "user_annotation")
LAUNCH_CATEGORIES = ("cuda_runtime", "cuda_driver")
STEP_PATTERN = re.compile(r"^ProfilerStep#(\d+)$")
DETAIL_LIMIT = 12  # detail lines shown per check


class InputError(Exception):
    pass


class Span:
    __slots__ = ("name", "cat", "pid", "tid", "ts", "end", "correlation")

    def __init__(self, event, where):
        try:
            self.name = event["name"]
            self.ts = float(event["ts"])
            self.end = self.ts + float(event.get("dur", 0))
        except (KeyError, TypeError, ValueError) as e:
            raise InputError("%s: event without a usable name/ts/dur (%s): %s"
                             % (where, e, json.dumps(event)[:200]))
        self.cat = event.get("cat")
        self.pid = event.get("pid")
        self.tid = event.get("tid")
        args = event.get("args") or {}
        self.correlation = args.get("correlation")

    @property
    def dur(self):
        return self.end - self.ts


def load_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError("%s: %s" % (path, e))
    if isinstance(data, list):  # the legacy profiler's export: a bare array
        return data
    if isinstance(data, dict) and isinstance(data.get("traceEvents"), list):
        return data["traceEvents"]
    raise InputError("%s: neither a Chrome trace object with traceEvents nor an event array" % path)


class Run:
    """One trace's operators, kernels and launches, optionally restricted to a loop range."""

    def __init__(self, events, label, loop_range=None):
        self.label = label
        self.loop = None  # (start, end) of the loop range, when restricted to one
        legacy = all("cat" not in e for e in events if e.get("ph") == "X")
        self.operators, self.kernels, self.launches = [], [], {}
        self.duplicate_correlations = 0
        for i, e in enumerate(events):
            if e.get("ph") != "X":
                continue
            where = "%s: traceEvents[%d]" % (label, i)
            cat = e.get("cat")
            if cat in OPERATOR_CATEGORIES or (legacy and cat is None):
                self.operators.append(Span(e, where))
            elif cat == "kernel":
                self.kernels.append(Span(e, where))
            elif cat in LAUNCH_CATEGORIES:
                s = Span(e, where)
                if s.correlation is None:
                    continue
                if s.correlation in self.launches:
                    self.duplicate_correlations += 1
                self.launches[s.correlation] = s
        if loop_range:
            self._restrict(loop_range)
        self._index_threads()

    def _restrict(self, name):
        loops = [o for o in self.operators if o.name == name]
        if len(loops) != 1:
            raise InputError("%s: %d events named %s (want exactly one)" % (self.label, len(loops), name))
        lo, hi = loops[0].ts, loops[0].end
        self.loop = (lo, hi)
        self.operators = [o for o in self.operators if lo <= o.ts <= hi]
        self.kernels = [k for k in self.kernels if lo <= self.launch_time(k) <= hi]

    def runtime_call_counts(self):
        """CUDA runtime calls per name (inside the loop range, when restricted to one)."""
        lo, hi = self.loop or (float("-inf"), float("inf"))
        return collections.Counter(s.name for s in self.launches.values()
                                   if s.cat == "cuda_runtime" and lo <= s.ts <= hi)

    def launch_time(self, kernel):
        launch = self.launches.get(kernel.correlation)
        return launch.ts if launch else kernel.ts

    def _index_threads(self):
        by_thread = collections.defaultdict(list)
        for o in self.operators:
            by_thread[(o.pid, o.tid)].append(o)
        self._threads = {}
        for key, ops in by_thread.items():
            ops.sort(key=lambda o: (o.ts, -o.end))
            self._threads[key] = (ops, [o.ts for o in ops])

    def launching_operator(self, launch):
        """The innermost cpu_op (else user_annotation) on the launch's thread containing its
        start, or None."""
        entry = self._threads.get((launch.pid, launch.tid))
        if not entry:
            return None
        ops, starts = entry
        best = None
        for o in reversed(ops[:bisect.bisect_right(starts, launch.ts)]):
            if o.end < launch.ts:
                continue
            rank = (o.cat != "user_annotation", o.ts)
            if best is None or rank > best[0]:
                best = (rank, o)
        return best[1] if best else None

    def kernel_counts(self):
        return collections.Counter(k.name for k in self.kernels)

    def operator_counts(self):
        return collections.Counter(o.name for o in self.operators)

    def steps(self):
        """{step number: (start, end)} of the ProfilerStep#N ranges."""
        out = {}
        for o in self.operators:
            m = STEP_PATTERN.match(o.name)
            if m:
                out[int(m.group(1))] = (o.ts, o.end)
        return out


class Result:
    def __init__(self, name, ok, summary, details=()):
        self.name, self.ok, self.summary, self.details = name, ok, summary, list(details)

    def lines(self):
        out = ["%s %s: %s" % ("PASS" if self.ok else "FAIL", self.name, self.summary)]
        shown = self.details[:DETAIL_LIMIT]
        out += ["    " + d for d in shown]
        if len(self.details) > len(shown):
            out.append("    ... and %d more" % (len(self.details) - len(shown)))
        return out


def compare_counts(name, what, a, b, ca, cb, require_some):
    names = sorted(set(ca) | set(cb))
    differ = [n for n in names if ca[n] != cb[n]]
    details = ["%s: %s %d, %s %d" % (n, a.label, ca[n], b.label, cb[n]) for n in differ]
    total = sum(ca.values())
    if require_some and total == 0 and sum(cb.values()) == 0:
        return Result(name, False, "no %s recorded in either run" % what)
    if differ:
        return Result(name, False, "differ for %d of %d names" % (len(differ), len(names)), details)
    return Result(name, True, "%d names, %d %s, equal" % (len(names), total, what))


def check_kernel_counts(a, b):
    return compare_counts("kernel counts per name", "kernels", a, b, a.kernel_counts(),
                          b.kernel_counts(), require_some=True)


def check_operator_counts(a, b):
    return compare_counts("operator counts per name", "operators", a, b, a.operator_counts(),
                          b.operator_counts(), require_some=True)


def check_runtime_call_counts(a, b):
    return compare_counts("CUDA runtime calls per name", "calls", a, b, a.runtime_call_counts(),
                          b.runtime_call_counts(), require_some=True)


def kernel_placement_problems(run):
    """Why each kernel is not inside its launching operator's window (empty when all are)."""
    problems = []
    for k in run.kernels:
        launch = run.launches.get(k.correlation)
        if launch is None:
            problems.append("%s at %.3f: no launch with correlation %s" % (k.name, k.ts, k.correlation))
            continue
        op = run.launching_operator(launch)
        if op is None:
            problems.append("%s at %.3f: its launch %s at %.3f is in no operator"
                            % (k.name, k.ts, launch.name, launch.ts))
        elif launch.end > op.end:
            problems.append("%s: its launch %s [%.3f, %.3f] ends after %s [%.3f, %.3f]"
                            % (k.name, launch.name, launch.ts, launch.end, op.name, op.ts, op.end))
        elif k.ts < launch.ts:
            problems.append("%s starts at %.3f, %.3f us before its launch %s in %s [%.3f, %.3f]"
                            % (k.name, k.ts, launch.ts - k.ts, launch.name, op.name, op.ts, op.end))
    return problems


def check_launch_windows(run):
    name = "kernels inside their launching operators (%s)" % run.label
    if not run.kernels:
        return Result(name, False, "no kernels recorded")
    problems = kernel_placement_problems(run)
    # A single process numbers its launches once; a repeated id means the pairing may be wrong.
    shared = ("; %d launch calls reuse a correlation id (the last one's launch is used)"
              % run.duplicate_correlations if run.duplicate_correlations else "")
    if problems:
        return Result(name, False, "%d of %d kernels are not%s" % (len(problems), len(run.kernels), shared),
                      problems)
    return Result(name, True, "all %d kernels%s" % (len(run.kernels), shared))


def kernels_per_operator(run):
    """{operator name: [kernel, ...]} by each kernel's launching operator."""
    out = collections.defaultdict(list)
    for k in run.kernels:
        launch = run.launches.get(k.correlation)
        op = run.launching_operator(launch) if launch else None
        out[op.name if op else "(no operator)"].append(k)
    return out


def cuda_time_per_operator(run):
    times = collections.Counter()
    for name, kernels in kernels_per_operator(run).items():
        times[name] += sum(k.dur for k in kernels)
    return times


def kernel_time_details(operator, a, b, ka, kb):
    """Why an operator's CUDA time differs: its kernels per name, count and median in each run."""
    def by_name(kernels):
        out = collections.defaultdict(list)
        for k in kernels:
            out[k.name].append(k.dur)
        return out
    na, nb = by_name(ka.get(operator, ())), by_name(kb.get(operator, ()))
    lines = []
    for n in sorted(set(na) | set(nb), key=lambda n: -max(sum(na.get(n, ())), sum(nb.get(n, ())))):
        def text(durations):
            return "%d x %.2f us" % (len(durations), statistics.median(durations)) if durations else "none"
        lines.append("  %s: %s %s, %s %s" % (n[:80], a.label, text(na.get(n, [])), b.label, text(nb.get(n, []))))
    return lines


# Two processes never time a microsecond kernel alike: on an H200, the same 2 us gemm measured
# 2.22 us in one run and 2.34 us in the next. An operator's CUDA time may differ by this much per
# kernel on top of the relative tolerance.
KERNEL_TIME_NOISE_US = 0.2


def check_cuda_time(a, b, tolerance=0.02, min_share=0.01):
    """Each operator launches the same kernels (count per kernel name) in both runs, and its
    kernels' summed time is within `tolerance`, or KERNEL_TIME_NOISE_US per kernel when that is
    more; names under `min_share` of the kernel time have their kernels compared, not their time."""
    name = "CUDA time per operator within %g %%" % (tolerance * 100)
    ka, kb = kernels_per_operator(a), kernels_per_operator(b)
    ta, tb = cuda_time_per_operator(a), cuda_time_per_operator(b)
    total = max(sum(ta.values()), sum(tb.values()))
    if total <= 0:
        return Result(name, False, "no kernel time recorded in either run")
    compared, small, failing, details = [], [], [], []
    for n in sorted(set(ta) | set(tb)):
        launched_a = collections.Counter(k.name for k in ka.get(n, ()))
        launched_b = collections.Counter(k.name for k in kb.get(n, ()))
        if launched_a != launched_b:
            failing.append(n)
            details.append("%s launches other kernels: %s %d, %s %d"
                           % (n, a.label, sum(launched_a.values()), b.label, sum(launched_b.values())))
            details += kernel_time_details(n, a, b, ka, kb)[:4]
            continue
        if max(ta[n], tb[n]) < min_share * total:
            small.append(n)
            continue
        compared.append(n)
        allowed = max(tolerance * max(ta[n], tb[n]), KERNEL_TIME_NOISE_US * sum(launched_a.values()))
        if abs(ta[n] - tb[n]) > allowed:
            failing.append(n)
            details.append("%s: %s %.1f us, %s %.1f us (%.2f %%)"
                           % (n, a.label, ta[n], b.label, tb[n],
                              abs(ta[n] - tb[n]) / max(ta[n], tb[n]) * 100))
            details += kernel_time_details(n, a, b, ka, kb)[:4]
    tail = ("; %d names under %g %% of the kernel time: their kernels compared, not their time"
            % (len(small), min_share * 100))
    if failing:
        return Result(name, False, "%d of %d operator names differ%s"
                      % (len(failing), len(compared) + len(small) + len(failing), tail), details)
    return Result(name, True, "%d operator names (%.1f us of kernels in %s; %g us per kernel "
                  "allowed for noise)%s" % (len(compared), sum(ta.values()), a.label,
                                            KERNEL_TIME_NOISE_US, tail))


PAIR_CHECKS = ("operators", "kernels", "calls", "launch-windows", "cuda-time")


def compare_pair(profsh, kineto, checks=PAIR_CHECKS, tolerance=0.02, min_share=0.01):
    results = []
    for c in checks:
        if c == "operators":
            results.append(check_operator_counts(profsh, kineto))
        elif c == "kernels":
            results.append(check_kernel_counts(profsh, kineto))
        elif c == "calls":
            results.append(check_runtime_call_counts(profsh, kineto))
        elif c == "launch-windows":
            r = check_launch_windows(profsh)
            if not r.ok:  # whether torch.profiler's own trace meets the rule tells where to look
                k = check_launch_windows(kineto)
                r.details.insert(0, "torch.profiler's trace, same rule: %s" % k.summary)
            results.append(r)
        elif c == "cuda-time":
            results.append(check_cuda_time(profsh, kineto, tolerance, min_share))
        else:
            raise InputError("unknown check %r (known: %s)" % (c, ", ".join(PAIR_CHECKS)))
    return results


def step_contents(run):
    """{step number: (operator counts, kernel counts)} of each ProfilerStep#N range: operators
    starting in it (other than the step ranges), kernels launched in it."""
    out = {}
    for n, (lo, hi) in run.steps().items():
        ops = collections.Counter(o.name for o in run.operators
                                  if lo <= o.ts <= hi and not STEP_PATTERN.match(o.name))
        ks = collections.Counter(k.name for k in run.kernels if lo <= run.launch_time(k) <= hi)
        out[n] = (ops, ks)
    return out


def check_window(window, reference, steps, kernels):
    """A live window (schedule or on demand) holds `steps` whole steps, and the operators and
    kernels of those steps are those of the same steps in a whole run of the same loop (steps
    beyond the reference's last are compared with its last: the loop repeats itself)."""
    name = "window %s" % window.label
    ref = step_contents(reference)
    if not ref:
        return Result(name, False, "the reference run has no ProfilerStep ranges")
    got = window.steps()
    if len(got) != steps:
        return Result(name, False, "%d steps (want %d): %s" % (len(got), steps, sorted(got)))
    want_ops, want_kernels = collections.Counter(), collections.Counter()
    have_ops, have_kernels = collections.Counter(), collections.Counter()
    for n, (ops, ks) in step_contents(window).items():
        have_ops.update(ops)
        have_kernels.update(ks)
        ops, ks = ref.get(n, ref[max(ref)])
        want_ops.update(ops)
        want_kernels.update(ks)
    details = ["operator %s: window %d, reference %d" % (n, have_ops[n], want_ops[n])
               for n in sorted(set(want_ops) | set(have_ops)) if have_ops[n] != want_ops[n]]
    if kernels:
        if not want_kernels:
            return Result(name, False, "the reference run's steps launched no kernels")
        details += ["kernel %s: window %d, reference %d" % (n, have_kernels[n], want_kernels[n])
                    for n in sorted(set(want_kernels) | set(have_kernels))
                    if have_kernels[n] != want_kernels[n]]
        details += kernel_placement_problems(window)
    label = "steps %s" % ", ".join(str(n) for n in sorted(got))
    if details:
        return Result(name, False, "%s: %d differences from the reference" % (label, len(details)),
                      details)
    return Result(name, True, "%s: %d operators%s as in the reference"
                  % (label, sum(have_ops.values()),
                     ", %d kernels (each in its operator)" % sum(have_kernels.values()) if kernels else ""))


def load_timings(path):
    try:
        with open(path) as f:
            t = json.load(f)
        times = [float(x) for x in t["step_seconds"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError("%s: no step_seconds list (%s)" % (path, e))
    if not times:
        raise InputError("%s: step_seconds is empty" % path)
    return t.get("mode", path), times


def launch_overhead(launch_run, none_times, kineto_times, profsh_times):
    """Per-step medians and the time each added per kernel launch (per operator when the run
    launched no kernels), in seconds."""
    steps = len(kineto_times)
    unit = "kernel launch" if launch_run.kernels else "operator"
    count = len(launch_run.kernels) if launch_run.kernels else len(launch_run.operators)
    if count == 0:
        raise InputError("%s: no kernels and no operators to divide by" % launch_run.label)
    per_step = count / steps
    medians = {m: statistics.median(t) for m, t in
               (("none", none_times), ("torch.profiler", kineto_times), ("profsh", profsh_times))}
    added = {m: (medians[m] - medians["none"]) / per_step for m in ("torch.profiler", "profsh")}
    return unit, per_step, medians, added


def format_overhead(unit, per_step, medians, added):
    plural = {"kernel launch": "kernel launches", "operator": "operators"}[unit]
    return ["median step: none %.3f ms, torch.profiler %.3f ms, profsh %.3f ms"
            % (medians["none"] * 1e3, medians["torch.profiler"] * 1e3, medians["profsh"] * 1e3),
            "%.1f %s a step; added per %s: torch.profiler %.2f us, profsh %.2f us"
            % (per_step, plural, unit, added["torch.profiler"] * 1e6, added["profsh"] * 1e6)]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    pair = sub.add_parser("pair")
    pair.add_argument("profsh_trace")
    pair.add_argument("kineto_trace")
    pair.add_argument("--loop-range")
    pair.add_argument("--checks", default=",".join(PAIR_CHECKS))
    pair.add_argument("--cuda-time-tolerance", type=float, default=0.02)
    pair.add_argument("--cuda-time-min-share", type=float, default=0.01)
    win = sub.add_parser("windows")
    win.add_argument("reference_trace")
    win.add_argument("windows", nargs="+")
    win.add_argument("--steps", type=int, required=True)
    win.add_argument("--kernels", action="store_true", help="compare kernels too (a GPU run)")
    win.add_argument("--reference-range")
    ov = sub.add_parser("overhead")
    ov.add_argument("--launches-from", required=True)
    ov.add_argument("--loop-range")
    ov.add_argument("none_timings")
    ov.add_argument("kineto_timings")
    ov.add_argument("profsh_timings")
    a = p.parse_args(argv)
    try:
        if a.command == "pair":
            profsh = Run(load_events(a.profsh_trace), "profsh", a.loop_range)
            kineto = Run(load_events(a.kineto_trace), "torch.profiler", a.loop_range)
            checks = [c for c in a.checks.split(",") if c]
            results = compare_pair(profsh, kineto, checks, a.cuda_time_tolerance,
                                   a.cuda_time_min_share)
        elif a.command == "windows":
            reference = Run(load_events(a.reference_trace), "reference", a.reference_range)
            results = [check_window(Run(load_events(w), w), reference, a.steps, a.kernels)
                       for w in a.windows]
        else:
            run = Run(load_events(a.launches_from), a.launches_from, a.loop_range)
            timings = [load_timings(t)[1] for t in (a.none_timings, a.kineto_timings, a.profsh_timings)]
            for line in format_overhead(*launch_overhead(run, *timings)):
                print(line)
            return 0
    except InputError as e:
        print("compare_runs.py: %s" % e, file=sys.stderr)
        return 2
    for r in results:
        print("\n".join(r.lines()))
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
