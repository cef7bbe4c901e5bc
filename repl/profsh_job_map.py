#!/usr/bin/python3
"""The Dask side of `profsh job map --dask ADDRESS`: one task per rank on an existing Dask cluster.

profsh starts this driver with /usr/bin/python3 (Debian's python3-distributed) and writes the plan
to its standard input as JSON:
  {"scheduler": ADDRESS, "profsh": PROGRAM, "retries": N, "worker_timeout": SECONDS,
   "tasks": [{"trace": ABSOLUTE_PATH, "staging": PATH}, ...]}
Each task runs `PROGRAM summarize TRACE -o OUT` on a worker that sees TRACE, into a folder of
the worker's own, and returns the summary's bytes (a trace whose processes are several ranks
makes OUT a folder of rank-R.summary.sqlite: their names and bytes): only the driver writes into
the output folder, so the workers need not share it. A task that fails (summarize's non-zero
exit, a worker lost under it) is run again by Dask, up to N more times. A scheduler that no
worker joins within SECONDS is an error (the tasks would wait for one forever).

What happens is told to profsh on standard output, one JSON object a line:
  {"event": "started", "workers": W}
  {"event": "done", "index": I}                  tasks[I]'s summary is written to its staging
                                                 path, a file, or a folder of rank-R files
                                                 (profsh then names each by its rank)
  {"event": "failed", "index": I, "message": M}  tasks[I] failed every time; M says why
profsh draws the progress line and the report (repl/job_map_progress.cpp). Exit status 2 with a
message on standard error when the map could not start; 0 otherwise.
"""
import asyncio
import json
import os
import sys
import uuid

PREFIX = "profsh job map"


def summarize_on_worker(program, trace):
    """Runs on a Dask worker: the summary's bytes, or {name: bytes} of the rank summaries of a
    trace holding several ranks, or an exception whose text says what failed."""
    import shutil
    import socket
    import subprocess
    import tempfile

    work = tempfile.mkdtemp(prefix="profsh-summary-")
    try:
        out = os.path.join(work, "summary.sqlite")
        try:
            done = subprocess.run([program, "summarize", trace, "-o", out],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except OSError as e:
            raise RuntimeError("cannot run %s on %s: %s" % (program, socket.gethostname(), e))
        if done.returncode != 0:
            # summarize's errors name the file; a count line after them does not.
            lines = [l for l in done.stderr.decode("utf-8", "replace").splitlines() if l.strip()]
            about = "; ".join(l for l in lines if trace in l) or (lines[-1] if lines else
                                                                   "no message")
            how = ("exit status %d" % done.returncode if done.returncode > 0 else
                   "killed by signal %d" % -done.returncode)
            raise RuntimeError("%s (%s on %s)" % (about, how, socket.gethostname()))
        if os.path.isdir(out):
            summaries = {}
            for name in sorted(os.listdir(out)):
                if name.endswith(".summary.sqlite") and not name.startswith("."):
                    with open(os.path.join(out, name), "rb") as f:
                        summaries[name] = f.read()
            return summaries
        with open(out, "rb") as f:
            return f.read()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def write_atomically(path, data):
    """`data`: a summary's bytes, written as the file `path`; or {name: bytes}, written as the
    folder `path` of those files."""
    import shutil

    part = "%s.part-%d" % (path, os.getpid())
    try:
        if isinstance(data, dict):
            os.mkdir(part)
            for name, content in data.items():
                write_file(os.path.join(part, os.path.basename(name)), content)
        else:
            write_file(part, data)
        os.replace(part, path)
    except OSError:
        if os.path.isdir(part):
            shutil.rmtree(part, ignore_errors=True)
        elif os.path.exists(part):
            os.unlink(part)
        raise


def tell(**event):
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def failure_text(error):
    from distributed.scheduler import KilledWorker

    if isinstance(error, KilledWorker):
        return "the workers running it were lost (%s)" % error
    return str(error) or type(error).__name__


def main():
    try:
        plan = json.load(sys.stdin)
        scheduler, program = plan["scheduler"], plan["profsh"]
        retries, tasks = int(plan["retries"]), plan["tasks"]
        worker_timeout = float(plan.get("worker_timeout", 60))
    except (ValueError, KeyError, TypeError) as e:
        print("%s: the driver's plan on standard input is not valid: %s" % (PREFIX, e),
              file=sys.stderr)
        return 2
    try:
        from distributed import Client, as_completed
    except ImportError as e:
        print("%s: --dask needs Dask's distributed module in %s (%s); on Debian: apt-get install "
              "python3-distributed" % (PREFIX, sys.executable, e), file=sys.stderr)
        return 2
    try:
        client = Client(scheduler, timeout=30)
    except (OSError, ValueError, TypeError) as e:
        print("%s: cannot reach the Dask scheduler at %s: %s" % (PREFIX, scheduler, e),
              file=sys.stderr)
        return 2

    with client:
        try:
            # Tasks on a scheduler without workers wait for one forever.
            client.wait_for_workers(1, timeout=worker_timeout)
        except (TimeoutError, asyncio.TimeoutError):
            print("%s: no worker joined the Dask scheduler at %s within %g s (--worker-timeout); "
                  "start dask-worker processes for it (dask-worker %s)" %
                  (PREFIX, scheduler, worker_timeout, scheduler), file=sys.stderr)
            return 2
        tell(event="started", workers=len(client.scheduler_info().get("workers", {})))
        run = uuid.uuid4().hex[:8]
        futures = {}
        for index, task in enumerate(tasks):
            # Readable keys on the cluster's dashboard; the run id keeps two maps apart.
            key = "profsh-summarize-%s-%d-%s" % (run, index, os.path.basename(task["trace"]))
            future = client.submit(summarize_on_worker, program, task["trace"], key=key,
                                   retries=retries, pure=False)
            futures[future] = index
        for future in as_completed(list(futures)):
            index = futures[future]
            staging = tasks[index]["staging"]
            try:
                # A result held by a worker lost since is computed again: result() waits for it.
                data = future.result()
            except Exception as e:  # the task's own error, or KilledWorker: reported by rank
                tell(event="failed", index=index, message=failure_text(e))
                continue
            finally:
                future.release()
            try:
                write_atomically(staging, data)
                tell(event="done", index=index)
            except OSError as e:
                tell(event="failed", index=index, message="cannot write %s: %s" % (staging, e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
