# profsh's fallback for PyTorch operators: where profsh's operator source cannot be used in this
# process (no plugin for this torch and Python, none could be built), the start-up hook calls
# start(reason) once torch is imported, and torch's own profiler records the operators instead,
# with the options profsh was given. At exit its trace goes into the session folder, beside the
# collector's streams; profsh merges it with them on one timeline (engine/session/torch_fallback).
#
# Files written into the session folder ($PROFSH_SESSION), each by temp file + rename:
#   torch-trace-<pid>.json    torch's export_chrome_trace (Kineto JSON, or torch 1.13's legacy
#                             array where torch was built without Kineto)
#   torch-trace-<pid>.anchor  lines, written after the trace (profsh reads a trace only with it):
#                             "profsh-torch-anchor 1", "pid N", "torch VERSION", "reason TEXT",
#                             then "anchor BEFORE_NS AFTER_NS TID" per anchor (tries at start and
#                             at exit: profsh uses the narrowest); each anchor is an empty record_function "profsh::clock_anchor"
#                             opened between two CLOCK_REALTIME readings; profsh maps torch's
#                             timestamps (torch 2.x: Kineto's epoch microseconds; torch 1.13's
#                             legacy profiler: microseconds from its own start) onto the
#                             collector's realtime clock with them, whatever clock torch used,
#                             and torch 1.13's own thread numbers onto OS tids (the anchor's
#                             "tid" is the OS tid of the thread that opened it)
#   operators-<pid>.txt       which path recorded this process's operators (note_operator_source)
#
# Windows: torch's profiler records the whole run and profsh keeps only what falls inside the
# collector's recording windows (schedule, capture ranges, on-demand requests) when it merges.
# The collector owns the windows (step markers, capture ranges and requests are seen there, not
# here), so the two cannot disagree about where a window begins; the cost is that torch's
# profiler keeps every event of the run in memory until the process exits (as a torch.profiler
# without a schedule does), and that its export at exit takes time after the workload's work.
#
# Nothing here may change the workload: stdout is not touched, every failure is caught and
# reported on one line of stderr, and a forked child (DataLoader workers) writes nothing.
import os
import sys
import time

_ANCHOR_NAME = "profsh::clock_anchor"
_profiler = None
_started_pid = None
_anchors = []
_reason = ""


def _say(text):
    try:
        sys.stderr.write("profsh: %s\n" % text)
        sys.stderr.flush()
    except Exception:
        pass


def _flag(name):
    value = os.environ.get(name, "")
    return value not in ("", "0")


def _write_atomically(path, text):
    temp = "%s.%d.tmp" % (path, os.getpid())
    with open(temp, "w") as f:
        f.write(text)
    os.replace(temp, path)


def note_operator_source(text):
    """Records which path recorded this process's operators, for profsh's summary."""
    try:
        session = os.environ.get("PROFSH_SESSION")
        if session:
            _write_atomically(os.path.join(session, "operators-%d.txt" % os.getpid()), str(text))
    except Exception as e:
        _say("cannot note the operator source: %s" % (e,))


def _anchor(tries=8):
    import threading
    from torch.autograd.profiler import record_function
    # The first record_function of a process is slow (milliseconds on torch 1.13): one before
    # the readings keeps the anchors' intervals narrow; profsh takes the narrowest of the tries
    # (as NTP takes its fastest exchange) and drops both names from the trace.
    with record_function(_ANCHOR_NAME + "_warmup"):
        pass
    for _ in range(tries):
        before = time.time_ns()
        with record_function(_ANCHOR_NAME):
            pass
        after = time.time_ns()
        _anchors.append({"before_ns": before, "after_ns": after, "tid": threading.get_native_id()})


def _activities(torch):
    from torch.profiler import ProfilerActivity
    activities = [ProfilerActivity.CPU]
    # Asked only of a CUDA build: on one, torch's profiler initializes CUDA (CUPTI) anyway.
    if getattr(torch.version, "cuda", None) and torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    return activities


def _release(torch):
    """(major, minor) of torch's version; (0, 0) when it cannot be read."""
    try:
        major, minor = str(torch.__version__).split(".")[:2]
        return int(major), int("".join(c for c in minor if c.isdigit()) or 0)
    except Exception:
        return (0, 0)


def start(reason):
    """Starts torch's profiler for the rest of this process; its trace is written at exit."""
    global _profiler, _started_pid, _reason
    try:
        if _profiler is not None or not os.environ.get("PROFSH_SESSION"):
            return
        import atexit
        import torch
        from torch.profiler import profile
        with_stack = _flag("PROFSH_WITH_STACK")
        if with_stack and sys.version_info >= (3, 13) and _release(torch) < (2, 7):
            # torch before 2.7 crashes the process in its Python tracer on 3.13
            # (pytorch/pytorch#144094): no stacks rather than a dead workload.
            with_stack = False
            _say("no Python stacks: torch %s's with_stack crashes on Python 3.13" % torch.__version__)
        options = dict(activities=_activities(torch),
                       record_shapes=_flag("PROFSH_RECORD_SHAPES"),
                       with_stack=with_stack,
                       with_flops=_flag("PROFSH_WITH_FLOPS"),
                       profile_memory=_flag("PROFSH_PROFILE_MEMORY"))
        profiler = profile(**options)
        profiler.start()
        _profiler, _started_pid, _reason = profiler, os.getpid(), str(reason)
        atexit.register(_finish)
        _anchor()
        note_operator_source("torch.profiler (fallback: %s)" % _reason)
        _say("operators are recorded by torch.profiler instead (%s)" % _reason)
    except Exception as e:
        # Nothing half-started may stay behind: a running profiler would keep every event in
        # memory for the rest of the process.
        profiler, _profiler = _profiler, None
        if profiler is not None:
            try:
                profiler.stop()
            except Exception:
                pass
        _say("torch.profiler could not be started either, operators not recorded: %s" % (e,))


def _finish():
    global _profiler
    profiler, _profiler = _profiler, None
    # A forked child (a DataLoader worker) inherited the parent's profiler: the parent's to export.
    if profiler is None or os.getpid() != _started_pid:
        return
    try:
        _anchor()
        profiler.stop()
        session = os.environ["PROFSH_SESSION"]
        base = os.path.join(session, "torch-trace-%d" % os.getpid())
        temp = "%s.json.%d.tmp" % (base, os.getpid())
        profiler.export_chrome_trace(temp)
        os.replace(temp, base + ".json")
        import torch
        lines = ["profsh-torch-anchor 1", "pid %d" % os.getpid(),
                 "torch %s" % torch.__version__, "reason %s" % " ".join(_reason.split())]
        lines += ["anchor %d %d %d" % (a["before_ns"], a["after_ns"], a["tid"]) for a in _anchors]
        _write_atomically(base + ".anchor", "\n".join(lines) + "\n")
    except Exception as e:
        _say("torch.profiler's trace was not written: %s" % (e,))
