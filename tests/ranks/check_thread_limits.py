"""load_ranks under an address-space limit (ulimit -v): a loading thread that cannot start, or a
trace too large for what is left, is an error the script can catch, never an abort. Scans limits
finely (1/160 of the top) from where loading works (found by doubling from 40 MB) down to where profsh cannot run a one-line script (below that
it cannot start at all, which is no concern of load_ranks), and asserts that no run of the job's
load died by a signal and that some run met the thread-start error.

  check_thread_limits.py PROFSH RANK_TRACE_DIR
"""
import os
import resource
import subprocess
import sys
import tempfile

SCRIPT = r'''
local ok, err = pcall(profsh.load_ranks, arg[1])
print(ok and "loaded" or ("error: " .. tostring(err)))
'''


def main():
    profsh, traces = sys.argv[1], sys.argv[2]
    if os.environ.get("PROFSH_SANITIZED") == "1":
        print("skipped: the sanitizers reserve more address space than any limit here allows")
        return 0
    with tempfile.TemporaryDirectory() as work:
        script = os.path.join(work, "load.lua")
        with open(script, "w") as f:
            f.write(SCRIPT)
        trivial = os.path.join(work, "trivial.lua")
        with open(trivial, "w") as f:
            f.write('print("started")\n')
        def run(argv, kb):
            def limit():
                resource.setrlimit(resource.RLIMIT_AS, (kb * 1024, kb * 1024))
            return subprocess.run(argv, capture_output=True, text=True, preexec_fn=limit, timeout=120)

        # The top of the scan: the lowest doubling of 40 MB under which this build loads the job.
        top_kb = 40000
        while run([profsh, script, traces], top_kb).stdout.strip() != "loaded":
            top_kb *= 2
            if top_kb > 16 << 20:
                print("FAIL: the job does not load even under a 16 GB limit")
                return 1
        step_kb = max(250, top_kb // 160)
        outcomes = {}
        for limit_kb in range(top_kb, 9999, -step_kb):
            started = run([profsh, trivial], limit_kb)
            if started.returncode != 0 or started.stdout.strip() != "started":
                break
            p = run([profsh, script, traces], limit_kb)
            if p.returncode < 0:
                print("FAIL: profsh died by signal %d under a %d KB limit:\n%s" %
                      (-p.returncode, limit_kb, p.stderr[-1500:]))
                return 1
            outcomes[limit_kb] = p.stdout.strip() or p.stderr.strip()[:200]
        thread_errors = [kb for kb, o in outcomes.items() if "cannot start a thread to load" in o]
        if not any(o == "loaded" for o in outcomes.values()):
            print("FAIL: no limit let the job load: %s" % outcomes)
            return 1
        if not thread_errors:
            print("FAIL: no limit met the thread-start error: %s" % outcomes)
            return 1
        print("ok: %d limits, no signal; the thread-start error at %d-%d KB" %
              (len(outcomes), min(thread_errors), max(thread_errors)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
