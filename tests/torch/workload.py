"""A small training step (convolution, linear layers in nn.Modules, forward and backward) for
comparing profsh's PyTorch operator source with torch.profiler.

  python3 workload.py torch OUT.json   runs it under torch.profiler and writes what torch saw
  python3 workload.py plain            runs it bare (profsh attaches from outside)

The measured region is the "measured" record_function in both cases.
"""
import bisect
import contextlib
import json
import os
import sys

import torch
import torch.nn as nn

from torch.autograd.profiler_util import EventList

STACK_FRAMES = 5  # group_by_stack_n of the stack comparison
torch.manual_seed(0)
torch.set_num_threads(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.fc1 = nn.Linear(16 * 32 * 32, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = torch.flatten(x, 1)
        x = torch.relu(self.fc1(x))
        return self.fc2(x)


def setup():
    model = Net()
    return model, torch.optim.SGD(model.parameters(), lr=0.01), torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))


def work(model, opt, x, y):
    for _ in range(3):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()


EDGE_US = 5  # how far before an operator torch may date the operator's first allocation


def edge_allocations(prof, events):
    """Per row, per operator call, the sizes of the allocations torch dated at most EDGE_US
    before the call starts, or after every other operator's start and end before it: what the row's bytes may be short of by torch's dating (one of them
    per call: an operator's first allocation).

    torch dates operators and allocations in whole microseconds taken at different points of its
    code, and on some machines an operator's first allocation (aten::mm's output, a microsecond
    after it starts here) is dated before the operator starts in every run: torch then charges it
    to the parent only. Only allocations count (no frees): that is the one way it was seen to go
    wrong, and a wider allowance would hide a real shortfall. They come from torch's raw records,
    which list every allocation (prof.events() lists only those charged to no operator)."""
    results = prof.profiler.kineto_results
    if hasattr(results, "trace_start_ns"):  # torch 2.x: times in nanoseconds, shown in microseconds
        base = results.trace_start_ns()
        memory = [((m.start_ns() - base) / 1000, m.nbytes()) for m in results.events()
                  if m.name() == "[memory]" and m.nbytes() >= 1024]
    else:
        base = results.trace_start_us()
        memory = [(m.start_us() - base, m.nbytes()) for m in results.events()
                  if m.name() == "[memory]" and m.nbytes() >= 1024]
    # On a loaded machine torch's gap between dating the allocation and dating the operator's
    # start grows past EDGE_US; an allocation after every other operator's start or end (so
    # inside no other operator, as torch dates them) and before the call is still the call's.
    boundaries = sorted({t for e in events for t in (e.time_range.start, e.time_range.end)})
    edges = {}
    for e in events:
        start = e.time_range.start
        last = bisect.bisect_left(boundaries, start) - 1
        previous = boundaries[last] if last >= 0 else float("-inf")
        before = sorted({nbytes for at, nbytes in memory
                         if nbytes > 0 and (start - EDGE_US <= at < start or previous < at < start)})
        if before:
            edges.setdefault((e.key, str(e.input_shapes)), []).append(before)
    return edges


def main():
    state = setup()
    under_torch = sys.argv[1] == "torch"
    profiler = contextlib.nullcontext()
    if under_torch:
        from torch.profiler import ProfilerActivity, profile
        # PROFSH_TORCH_WITH_STACK=0: torch 2.6's Python tracer crashes on Python 3.13
        # (pytorch/pytorch#144094, fixed after 2.6), so there torch records no stacks.
        profiler = profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True,
                           with_stack=os.environ.get("PROFSH_TORCH_WITH_STACK", "1") != "0", with_flops=True)
    # torch's profiler and profsh's capture range ("measured") start on this one line, so that the
    # frames running when recording starts are at the same line in both (torch's form of stacks
    # shows such a frame at the line it was on then, a function called later at its def line).
    with profiler as prof, torch.autograd.profiler.record_function("measured"):
        work(*state)
    if not under_torch:
        return
    # Only what ran inside "measured" (profsh captures that range): torch's record_function
    # makes a tensor before the range starts.
    everything = [e for e in prof.events() if e.device_type.name == "CPU" and e.name != "[memory]"]
    measured = [e for e in everything if e.name == "measured"][0].time_range
    events = [e for e in everything
              if e.time_range.start >= measured.start and e.time_range.end <= measured.end]
    groups = {}
    for e in events:
        g = groups.setdefault((e.key, str(e.input_shapes)), [0, 0, 0, 0])
        g[0] += 1
        g[1] += e.cpu_memory_usage
        g[2] += e.self_cpu_memory_usage
        g[3] += e.flops or 0
    # torch's times are whole microseconds: an allocation in the microsecond an operator starts
    # or ends counts for it or for its neighbour depending on the run. Those bytes are what
    # another attribution may differ by, per row. This build of torch (no Kineto) sorts its
    # records by microsecond and does not list its allocations as events, so everything an
    # operator that lasted under a microsecond got is such an allocation (aten::resolve_conj
    # inside aten::mm is given mm's output in about half the runs).
    ambiguous = {}
    for e in events:
        if e.time_range.start == e.time_range.end and e.cpu_memory_usage:
            key = (e.key, str(e.input_shapes))
            ambiguous[key] = ambiguous.get(key, 0) + abs(e.cpu_memory_usage)
    allocations = [e for e in prof.events() if e.name == "[memory]"
                   and measured.start <= e.time_range.start <= measured.end]
    # torch counts a record for every operator of the process whose range holds its time, so a
    # record on any thread is ambiguous for the operators that start or end in its microsecond
    # (an allocation freed by the autograd engine at the end of an evaluate_function range).
    for m in allocations:
        at = m.time_range.start
        for e in events:
            if at in (e.time_range.start, e.time_range.end):
                key = (e.key, str(e.input_shapes))
                ambiguous[key] = ambiguous.get(key, 0) + abs(m.cpu_memory_usage)
    edges = edge_allocations(prof, events)
    rows = [{"key": k, "shapes": s, "count": g[0], "cpu_memory_usage": g[1], "self_cpu_memory_usage": g[2],
             "flops": g[3], "boundary_bytes": ambiguous.get((k, s), 0), "edge_bytes": edges.get((k, s), [])}
            for (k, s), g in groups.items()]
    by_seq = {}
    for e in events:
        if e.sequence_nr >= 0 and not e.name.startswith("autograd::engine"):
            by_seq.setdefault((e.sequence_nr, e.thread), e.name)
    links = []
    for e in events:
        if e.name.startswith("autograd::engine::evaluate_function") and e.sequence_nr >= 0:
            fwd = by_seq.get((e.sequence_nr, e.fwd_thread))
            links.append([e.name, fwd])
    modules = {}
    for e in events:
        mods = sorted({f for f in (e.stack or []) if f.startswith("nn.Module: ")})
        if mods:
            modules.setdefault(e.name, set()).update(mods)
    # torch's own grouping by the innermost frames, of the measured events only. They come from
    # prof.events(), whose tree is built (backward operators carry their forward operator's
    # stack), so the list of them is marked built rather than built again.
    measured_events = EventList(events)
    measured_events._tree_built = True
    stack_groups = [[a.key, list(a.stack), a.count]
                    for a in measured_events.key_averages(group_by_stack_n=STACK_FRAMES)]
    json.dump({"rows": rows, "links": sorted(links, key=str), "modules": {k: sorted(v) for k, v in modules.items()},
               "stack_groups": stack_groups}, open(sys.argv[2], "w"), indent=0)


if __name__ == "__main__":
    main()
