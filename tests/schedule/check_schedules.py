#!/usr/bin/env python3
"""profsh.schedule against torch.profiler.schedule: the actions for a grid of 243 schedules,
recorded with Debian's torch 1.13 (record_torch_schedules.py -> torch_schedules.json), must
be the same step for step; the argument sets torch rejects must be rejected with its message;
skip_first_wait (newer torch) follows the reference semantics on hand-computed cases.

Usage: check_schedules.py PROFSH TESTS_SCHEDULE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def lua(profsh, code):
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(code)
    try:
        return subprocess.run([profsh, f.name], capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(f.name)


def main():
    profsh, here = os.path.abspath(sys.argv[1]), sys.argv[2]
    doc = json.load(open(os.path.join(here, "torch_schedules.json")))
    lines = []
    for c in doc["cases"]:
        lines.append('do local s = profsh.schedule{wait=%d, warmup=%d, active=%d, ["repeat"]=%d, skip_first=%d} '
                     'local t = {} for i = 0, %d do t[#t + 1] = s(i) end print(table.concat(t, " ")) end'
                     % (c["wait"], c["warmup"], c["active"], c["repeat"], c["skip_first"], doc["steps"] - 1))
    r = lua(profsh, "\n".join(lines) + "\n")
    got = r.stdout.splitlines()
    want = [" ".join(c["actions"]) for c in doc["cases"]]
    same = sum(1 for g, w in zip(got, want) if g == w)
    check(r.returncode == 0 and got == want,
          "%d schedules x %d steps equal torch %s's actions (%d/%d equal)" % (len(want), doc["steps"], doc["torch"], same, len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            print("  first difference: case %s\n   torch:  %s\n   profsh: %s" % (doc["cases"][i], w, g))
            break
    check(doc["warmup_zero_warning"] in r.stderr, "warmup=0 gives torch's warning: %s" % doc["warmup_zero_warning"])

    for rej in doc["rejected"]:
        args = ", ".join('["%s"]=%d' % (k, v) for k, v in rej["args"].items())
        r = lua(profsh, "profsh.schedule{%s}\n" % args)
        check(r.returncode == 1 and rej["error"] in r.stderr, "rejected like torch: {%s} -> %s" % (args, r.stderr.strip()[:120]))

    # skip_first_wait (added to torch after 2.5): the first cycle after skip_first has no wait.
    r = lua(profsh, 'local s = profsh.schedule{skip_first=1, wait=2, warmup=1, active=2, ["repeat"]=2, skip_first_wait=1}\n'
                    'local t = {} for i = 0, 9 do t[#t + 1] = s(i) end print(table.concat(t, " "))\n')
    want = "NONE WARMUP RECORD RECORD_AND_SAVE NONE NONE WARMUP RECORD RECORD_AND_SAVE NONE"
    check(r.stdout.strip() == want, "skip_first_wait: %s" % r.stdout.strip())
    r = lua(profsh, 'local s = profsh.schedule{wait=1, warmup=1, active=2}\nprint(s, s.active, pcall(s, -1))\n')
    check(r.stdout.strip() == "<profsh.Schedule skip_first=0, wait=1, warmup=1, active=2, repeat=0>\t2\tfalse\t"
          "bad argument #1 to 'schedule' (step must be >= 0, got -1)", "a schedule prints, has fields, and checks its step: %r" % r.stdout.strip())
    print("schedules: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
