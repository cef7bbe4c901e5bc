#!/usr/bin/env python3
"""The release bundle unpacked and run inside Debian 13 roots (tests/torch2/in_root.sh), where
nothing of this build machine is installed.

  minimal  a debootstrap --variant=minbase trixie root (tests/torch2/debian13_root.sh with no
           package added, ~/.cache/profsh/debian13-minbase-root): no Lua, no elfutils, no
           compiler, no Python. Checked first that it is so. There the bundle:
             - runs the NVTX sample under `profsh run`: its table's call counts are the sample's;
             - loads a shared GPU trace (tests/data/kineto) and prints its tables (operators,
               nsys' kernel summary, PyProf's kernels): the same bytes as this build on the host;
             - writes a report (HTML with the chart library inlined; Markdown, as on the host);
             - answers `profsh sql` with the kernel count the trace's JSON holds;
             - maps no shared library but glibc's (its /proc/self/maps; the root does have
               Debian's libsqlite3, which login's liblastlog2 pulls into minbase);
           and, in a throwaway copy of that root, the .deb (DEB, made by bundle_contents)
           installs with dpkg, its /usr/bin/profsh records the NVTX sample, and dpkg removes
           every file it installed.
  torch    the Debian 13 root the torch tests use (tests/torch2/debian13_root.sh: python3-torch
           2.6, g++, libtorch-dev; made once and cached, see docs/TESTING.md for why this one is
           reused rather than two more roots made): a script doing 5 aten::mm under
           `profsh run --activities torch`, with an empty plugin cache each time:
             - no compiler on the PATH: the fallback (torch.profiler) records the operators and
               says why on one line; no build is tried;
             - with g++ and libtorch's headers: the plugin is built at first use from the
               bundle's sources, records the operators, and is taken from the cache next time.

Usage: check_in_root.py minimal|torch TARBALL BUILD_DIR SOURCE_DIR [DEB]   (exit 77: no such root)
"""
import gzip
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

failures = []
NVTX_CALLS = {"iteration": 1, "forward": 1, "backward": 1, "optimizer.step": 1, "layer1.conv": 2,
              "head.linear": 2, "matmul_tile": 110, "load batch": 1}  # per iteration of nvtx_pipeline
GPU_TRACE = "critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz"
NOT_RECORDED = "profsh: operators are recorded by torch.profiler instead ("
BUILD_LINE = "profsh: building the PyTorch operator source for torch "
MM_COUNT = 'local n = 0 for _, e in ipairs(profsh.load(arg[1]):events{name = "aten::mm", limit = 100000}) do n = n + 1 end print(n)'
WORKLOAD = """import torch
x = torch.ones(64, 64)
for _ in range(5):
    x = torch.mm(x, x) / 64
print("mm done", int(x.sum()))
"""


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


class Root:
    def __init__(self, source, path):
        self.in_root = os.path.join(source, "tests", "torch2", "in_root.sh")
        self.path = path

    def run(self, argv, env=None, timeout=600):
        """argv inside the root, with env (only these variables and a plain PATH unless given)."""
        full = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
        full.update(env or {})
        command = ["env", "-i"] + ["%s=%s" % kv for kv in full.items()] + argv
        return subprocess.run([self.in_root, self.path] + command, capture_output=True, text=True,
                              timeout=timeout)


def make_root(source, packages_argv):
    r = subprocess.run([os.path.join(source, "tests", "torch2", "debian13_root.sh")] + packages_argv,
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("no Debian 13 root (%s); skipping" % r.stderr.strip()[-300:])
        sys.exit(77)
    return r.stdout.strip().splitlines()[-1]


def calls(table):
    """Name -> '# of Calls' of a key_averages table."""
    out = {}
    for line in table.splitlines():
        m = re.match(r"^\s*(\S.*?)\s{2,}.*\s(\d+)\s*$", line)
        if m and "%" in line:
            out[m.group(1)] = int(m.group(2))
    return out


def minimal(root, top, work, build, source):
    r = root.run(["sh", "-c", "ls -1 /usr/lib/x86_64-linux-gnu; for c in g++ gcc c++ cc python3 lua; do "
                  "command -v $c; done; true"])
    present = [l for l in r.stdout.split() if re.match(r"^(liblua|libdw|libelf|/)", l)]
    check(r.returncode == 0 and not present,
          "the root has no Lua, no elfutils, no compiler, no Python (found: %s %s)" % (present, r.stderr[-200:]))
    profsh = os.path.join(top, "bin", "profsh")

    iterations = 4
    out = os.path.join(work, "nvtx.profsh")
    r = root.run([profsh, "run", "-o", out, "--", os.path.join(top, "lib", "profsh", "nvtx_pipeline"), str(iterations)],
                 env={"TMPDIR": work})
    got = calls(r.stdout)
    want = {k: v * iterations for k, v in NVTX_CALLS.items()}
    check(r.returncode == 0 and "nvtx_pipeline: %d iterations" % iterations in r.stdout and
          {k: got.get(k) for k in want} == want and "nothing dropped" in r.stderr and os.path.exists(out),
          "profsh run records the NVTX sample: calls %s (%s)" % ({k: got.get(k) for k in want}, r.stderr[-300:]))

    trace = os.path.join(source, "tests", "data", "kineto", GPU_TRACE)
    tables = [["-e", "print(profsh.load(arg[1]):key_averages():table{sort_by = 'cuda_time_total', row_limit = 12})",
               "--", trace],
              ["stats", trace, "--report", "cuda_gpu_kern_sum"],
              ["kernels", trace]]
    for argv in tables:
        inside = root.run([profsh] + argv)
        host = subprocess.run([os.path.join(build, "profsh")] + argv, capture_output=True, text=True, timeout=300)
        check(inside.returncode == 0 and len(inside.stdout.splitlines()) > 4 and inside.stdout == host.stdout,
              "profsh %s on a shared GPU trace prints the table this build prints on the host (%d lines; %s)"
              % (argv[0] if argv[0] != "-e" else "-e key_averages", len(inside.stdout.splitlines()), inside.stderr[-200:]))

    os.makedirs(os.path.join(work, "host"))
    html, md, host_md = (os.path.join(work, n) for n in ("report.html", "report.md", "host/report.md"))
    r1 = root.run([profsh, "report", trace, "-o", html])
    r2 = root.run([profsh, "report", trace, "-o", md])
    subprocess.run([os.path.join(build, "profsh"), "report", trace, "-o", host_md], capture_output=True, timeout=300)
    page = open(html, errors="replace").read() if os.path.exists(html) else ""
    check(r1.returncode == 0 and page.startswith("<!DOCTYPE html>") and "echarts" in page and len(page) > 500000,
          "profsh report writes an HTML page with the chart library inlined (%d bytes; %s)" % (len(page), r1.stderr[-200:]))
    same = os.path.exists(md) and os.path.exists(host_md) and open(md).read() == open(host_md).read()
    check(r2.returncode == 0 and same, "the Markdown report is the one written on the host (%s)" % r2.stderr[-200:])

    with gzip.open(trace, "rt") as f:
        kernels = sum(1 for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel" and e.get("ph") == "X")
    r = root.run([profsh, "sql", trace, "SELECT count(*) AS n FROM slice WHERE category = 'kernel'", "--format", "csv"])
    check(r.returncode == 0 and r.stdout.split() == ["n", str(kernels)] and kernels > 0,
          "profsh sql counts the trace's %d kernels (%r %s)" % (kernels, r.stdout, r.stderr[-200:]))

    r = root.run([profsh, "-e", "for l in io.lines('/proc/self/maps') do print(l) end"])
    libraries = sorted({os.path.basename(l.split()[-1]) for l in r.stdout.splitlines() if ".so" in l.split()[-1]})
    check(r.returncode == 0 and libraries and all(re.match(r"^(libc|libm|ld-linux-x86-64)[.-]", l) for l in libraries),
          "profsh maps glibc's libraries alone there (%s)" % libraries)


def deb_in_copy(root, deb, source):
    """dpkg -i, a recording, dpkg -r, in a copy of the root (the cached one stays as it is)."""
    copy = os.path.join(os.path.dirname(root.path), "bundle-deb-root-%d" % os.getpid())
    subprocess.run(["rm", "-rf", copy], check=True)
    subprocess.run(["cp", "-a", root.path, copy], check=True)
    try:
        inside = Root(source, copy)
        admin = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}  # dpkg runs ldconfig
        r = inside.run(["dpkg", "-i", deb], env=admin)
        check(r.returncode == 0, "dpkg installs the .deb in the minimal root (%s)" % (r.stdout + r.stderr)[-300:])
        r = inside.run(["/usr/bin/profsh", "run", "-o", "/root/d.profsh", "--", "/usr/lib/profsh/nvtx_pipeline", "1"])
        check(r.returncode == 0 and calls(r.stdout).get("matmul_tile") == 110,
              "the installed /usr/bin/profsh records the NVTX sample from /usr/lib/profsh (%s)" % r.stderr[-300:])
        r = inside.run(["sh", "-c", "dpkg -r profsh && ls /usr/bin/profsh /usr/lib/profsh /usr/share/profsh 2>&1; true"],
                       env=admin)
        check(r.returncode == 0 and r.stdout.count("No such file") == 3,
              "dpkg -r removes what it installed (%s)" % (r.stdout + r.stderr)[-300:])
    finally:
        subprocess.run(["rm", "-rf", copy])


def torch(root, top, work, build):
    r = root.run(["sh", "-c", "command -v g++ && python3 -c 'import torch; print(torch.__version__)'"])
    check(r.returncode == 0 and "/g++" in r.stdout, "the root has python3-torch and g++ (%s)" % (r.stdout + r.stderr)[-200:])
    profsh = os.path.join(top, "bin", "profsh")
    script = os.path.join(work, "mm5.py")
    open(script, "w").write(WORKLOAD)
    nocompiler = os.path.join(work, "bin-without-compiler")
    os.makedirs(nocompiler)

    def record(name, path, cache):
        out = os.path.join(work, name + ".profsh")
        r = root.run([profsh, "run", "--activities", "torch", "--no-table", "-o", out, "--", "/usr/bin/python3", script],
                     env={"PATH": path, "PROFSH_CACHE": cache, "TMPDIR": work}, timeout=900)
        n = subprocess.run([os.path.join(build, "profsh"), "-e", MM_COUNT, "--", out], capture_output=True, text=True)
        return r, n.stdout.strip()

    cache = os.path.join(work, "cache-fallback")
    r, mm = record("fallback", nocompiler, cache)
    fallback = [l for l in r.stderr.splitlines() if l.startswith(NOT_RECORDED)]
    check(r.returncode == 0 and "mm done 4096" in r.stdout and mm == "5" and len(fallback) == 1
          and "no C++ compiler" in fallback[0] and BUILD_LINE not in r.stderr,
          "without a compiler the fallback records the 5 aten::mm and says why (%s; %s)" % (mm, r.stderr[-400:]))

    cache = os.path.join(work, "cache-plugin")
    r, mm = record("plugin", "/usr/local/bin:/usr/bin:/bin", cache)
    plugins = [f for f in os.listdir(os.path.join(cache, "torch_plugin")) if f.endswith(".so")] \
        if os.path.isdir(os.path.join(cache, "torch_plugin")) else []
    check(r.returncode == 0 and mm == "5" and r.stderr.count(BUILD_LINE) == 1 and NOT_RECORDED not in r.stderr
          and len(plugins) == 1,
          "with g++ and libtorch-dev the plugin is built at first use and records the 5 aten::mm (%s; %s; %s)"
          % (mm, plugins, r.stderr[-400:]))
    r, mm = record("plugin-again", "/usr/local/bin:/usr/bin:/bin", cache)
    check(r.returncode == 0 and mm == "5" and BUILD_LINE not in r.stderr and NOT_RECORDED not in r.stderr,
          "the next run takes the plugin from the cache (%s; %s)" % (mm, r.stderr[-300:]))


def main():
    mode, tarball, build, source = sys.argv[1], *[os.path.abspath(a) for a in sys.argv[2:5]]
    if mode == "minimal":
        path = make_root(source, [os.path.join(os.path.expanduser("~"), ".cache", "profsh", "debian13-minbase-root"), ""])
    else:
        path = make_root(source, [])
    root = Root(source, path)
    # /tmp is shared with the root at the same path (in_root.sh).
    with tempfile.TemporaryDirectory(prefix="profsh_bundle_root_", dir="/tmp") as work:
        with tarfile.open(tarball) as t:
            t.extractall(work)
        top = os.path.join(work, os.path.basename(tarball)[:-len(".tar.gz")])
        if mode == "minimal":
            minimal(root, top, work, build, source)
            deb = os.path.abspath(sys.argv[5]) if len(sys.argv) > 5 else None
            if deb:
                check(os.path.exists(deb), "bundle_contents made the .deb %s" % deb)
                if os.path.exists(deb):
                    deb_in_copy(root, deb, source)
        else:
            torch(root, top, work, build)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
