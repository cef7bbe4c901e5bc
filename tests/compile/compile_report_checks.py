"""What the compile report (bindings/templates/compile.lua) must show of any trace, as findings
(condition, what) for the caller's check(): its step chart has a label for every bar (never
`nil`) and adds up to no more than the trace's span; a CPU-only trace has no GPU busy/idle
chart, and a line says why. Used by check_compile.py and check_compile_live.py."""
import os
import subprocess


def step_chart(markdown):
    """The rows of the report's 'Where each step's time went' table: (label, [values])."""
    lines = markdown.splitlines()
    start = lines.index("**Where each step's time went**")
    rows = []
    for line in lines[start + 1:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == "step" or set(cells[0]) <= set("-:"):
            continue
        rows.append((cells[0], cells[1:]))
    return rows


def cell_value(text):
    """A table's number ("13,336,315.8": digits grouped) and how far its rounding may be off."""
    digits = text.replace(",", "")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    return float(digits), 0.5 * 10 ** -decimals


def union_length(spans):
    """The length of the union of (start, end) spans: compile time counted once."""
    total, cur_start, cur_end = 0.0, None, None
    for a, b in sorted(spans):
        if cur_end is None or a > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = a, b
        else:
            cur_end = max(cur_end, b)
    return total + (cur_end - cur_start if cur_end is not None else 0.0)


def trace_span(profsh, trace):
    r = subprocess.run([profsh, "-e", "print(('%.3f'):format(profsh.load(arg[1]).duration))", "--", trace],
                       capture_output=True, text=True)
    return float(r.stdout) if r.returncode == 0 else None


def report_findings(profsh, trace, work, name, cpu_only):
    md = os.path.join(work, name + ".md")
    r = subprocess.run([profsh, "report", trace, "--template", "compile", "-o", md],
                       capture_output=True, text=True)
    found = [(r.returncode == 0, "%s: the compile report is written (%s)" % (name, r.stderr.strip()[-300:]))]
    span = trace_span(profsh, trace)
    if r.returncode != 0 or span is None:
        return found + [(span is not None, "%s: the trace's span is read" % name)]
    text = open(md, encoding="utf-8").read()
    rows = step_chart(text) if "**Where each step's time went**" in text else []
    labels = [label for label, _ in rows]
    values = [cell_value(c) for _, cells in rows for c in cells]
    total = sum(v for v, _ in values)
    found.append((bool(rows) and "nil" not in labels and all(labels),
                  "%s: the step chart's labels %s" % (name, labels)))
    # Each value as the Markdown rounds it (half a unit of its last decimal off at most).
    rounding = sum(off for _, off in values)
    found.append((total <= span + rounding + 0.001,
                  "%s: the step chart adds up to %.3f us, no more than the trace's span %.3f us"
                  % (name, total, span)))
    has_gpu_chart = "**Device time of the compiled regions**" in text
    if cpu_only:
        found.append((not has_gpu_chart and "no GPU busy/idle chart" in text,
                      "%s: a CPU-only trace has no GPU busy/idle chart, and the report says why" % name))
    else:
        found.append((has_gpu_chart, "%s: a trace with device work has the GPU busy/idle chart" % name))
    return found
