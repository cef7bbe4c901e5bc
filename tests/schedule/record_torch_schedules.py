#!/usr/bin/env python3
"""Records torch.profiler.schedule's actions for a grid of schedules with the real PyTorch
(Debian's 1.13), for tests/schedule/check_schedules.lua to compare profsh.schedule with.
Also records which argument sets torch rejects. Run with /usr/bin/python3 (Debian's torch).

Usage: record_torch_schedules.py OUT.json
"""
import itertools
import json
import sys
import warnings

from torch.profiler import schedule

STEPS = 40


def main():
    cases = []
    for wait, warmup, active, repeat, skip_first in itertools.product([0, 1, 2], [0, 1, 3], [1, 2, 5], [0, 1, 3],
                                                                      [0, 2, 7]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn = schedule(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first)
        cases.append({"wait": wait, "warmup": warmup, "active": active, "repeat": repeat, "skip_first": skip_first,
                      "actions": [fn(step).name for step in range(STEPS)]})
    rejected = []
    for args in [dict(wait=-1, warmup=0, active=1), dict(wait=0, warmup=-1, active=1), dict(wait=0, warmup=0, active=0),
                 dict(wait=0, warmup=0, active=1, repeat=-1), dict(wait=0, warmup=0, active=1, skip_first=-2)]:
        try:
            schedule(**args)
            rejected.append({"args": args, "error": None})
        except AssertionError as e:
            rejected.append({"args": args, "error": str(e)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        schedule(wait=1, warmup=0, active=1)
    doc = {"torch": __import__("torch").__version__, "steps": STEPS, "cases": cases, "rejected": rejected,
           "warmup_zero_warning": str(caught[0].message) if caught else None}
    with open(sys.argv[1], "w") as f:
        json.dump(doc, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
