#!/usr/bin/env python3
"""The release bundle as a user gets it (./build.sh dist), checked on this machine:
  - its layout: one folder named like the tarball; bin/profsh; lib/profsh with the collector
    libraries, the sample workload, the PyTorch start-up hook, the plugin's build helper (which
    knows no prebuilt plugin) and the plugin's sources; the recipes and their samples in
    share/profsh/scripts; no prebuilt plugin anywhere;
  - every ELF file needs no shared library but glibc's, has no RPATH or RUNPATH, and needs no
    glibc symbol version newer than the one README promises;
  - profsh --version: this project's version, this checkout's commit, the libraries and CUDA
    headers of this build, the collector and the plugin's sources found inside the unpacked
    folder;
  - unpacked under a path with a space: traces are read, and `profsh run` says plainly that
    LD_PRELOAD cannot carry that path (non-zero exit) instead of recording half;
  - recipes run from there: quickstart.lua on its bundled sample, attach.lua on the sample
    workload it finds through profsh.library_dir;
  - `cmake --install` of this build installs the same files;
  - profsh job map --dask finds its driver in lib/profsh/python;
  - the .deb (CPack, as ./build.sh deb): the same files under /usr, Depends on libc6 alone,
    Suggests python3-distributed, and
    its profsh finds its collector in /usr/lib/profsh's place.

Usage: check_bundle.py TARBALL BUILD_DIR SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tarfile
import tempfile

failures = []
GLIBC_LIBRARIES = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
                   "ld-linux-x86-64.so.2"}


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, **kw)


def files_under(top):
    out = set()
    for root, _, names in os.walk(top):
        out |= {os.path.relpath(os.path.join(root, n), top) for n in names}
    return out


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def glibc_promised(source):
    """The glibc README's install section names: "glibc 2.36 or newer"."""
    text = open(os.path.join(source, "README.md")).read()
    m = re.search(r"glibc (\d+)\.(\d+) or newer", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def check_elf_files(top, promised):
    elves = sorted(p for p in files_under(top) if is_elf(os.path.join(top, p)))
    check({"bin/profsh", "lib/profsh/libprofsh_collector.so", "lib/profsh/libprofsh_memory.so",
           "lib/profsh/nvtx_pipeline", "lib/profsh/libitt_ranges.so"} <= set(elves),
          "the programs and libraries are in the bundle (%s)" % elves)
    for rel in elves:
        path = os.path.join(top, rel)
        dynamic = run(["readelf", "-d", "-W", path]).stdout
        needed = set(re.findall(r"\(NEEDED\).*\[(.*)\]", dynamic))
        check(needed <= GLIBC_LIBRARIES, "%s needs glibc's libraries alone (%s)" % (rel, sorted(needed)))
        check("RPATH" not in dynamic and "RUNPATH" not in dynamic, "%s has no RPATH or RUNPATH" % rel)
        versions = run(["readelf", "-V", "-W", path]).stdout
        newest = max([tuple(map(int, v)) for v in re.findall(r"Name: GLIBC_(\d+)\.(\d+)", versions)] or [(0, 0)])
        check(promised is not None and newest <= promised,
              "%s needs glibc %d.%d at most (README promises %s or newer)" % (rel, newest[0], newest[1], promised))


def cmake_cache(build, name):
    for line in open(os.path.join(build, "CMakeCache.txt")):
        if line.startswith(name + ":"):
            return line.split("=", 1)[1].strip()
    return ""


def header_define(path, name):
    m = re.search(r"#define\s+%s\s+\"?([^\"\s]+)" % name, open(path).read())
    return m.group(1) if m else None


def check_version(top, build, source):
    r = run([os.path.join(top, "bin", "profsh"), "--version"])
    out = r.stdout
    print(out, end="")
    version = re.search(r"project\(profsh VERSION (\S+)", open(os.path.join(source, "CMakeLists.txt")).read()).group(1)
    check(r.returncode == 0 and out.startswith("profsh %s (commit " % version), "--version names the version %s" % version)
    # The commit the build was made from ("-dirty" aside: a file edited since says nothing of it).
    head = run(["git", "-C", source, "rev-parse", "--short=12", "HEAD"])
    if head.returncode == 0:
        check("(commit %s" % head.stdout.strip() in out,
              "--version names this checkout's commit %s (else the build predates it: rebuild)" % head.stdout.strip())
    cuda = int(header_define(os.path.join(cmake_cache(build, "NVTX3_INCLUDE_DIR"), "cuda.h"), "CUDA_VERSION"))
    check("CUDA headers:     %d.%d" % (cuda // 1000, cuda % 1000 // 10) in out, "--version names the CUDA headers %d" % cuda)
    sqlite = header_define("/usr/include/sqlite3.h", "SQLITE_VERSION")
    lua = header_define("/usr/include/lua5.4/lua.h", "LUA_VERSION_MAJOR"), header_define("/usr/include/lua5.4/lua.h", "LUA_VERSION_MINOR")
    check("SQLite %s" % sqlite in out and "Lua %s.%s." % lua in out and "elfutils 0." in out and "zlib 1." in out,
          "--version names Lua %s.%s, SQLite %s, zlib and elfutils" % (lua[0], lua[1], sqlite))
    check("C++ runtime (linked statically)" in out, "--version says the libraries are linked statically")
    check("collector:        %s/lib/profsh/libprofsh_collector.so" % top in out,
          "--version finds the collector inside the unpacked folder")
    check("(sources: %s/lib/profsh/torch_plugin_src)" % top in out and "prebuilt" not in out,
          "--version: the operator source is built at first use from the bundle's sources, none prebuilt")


def check_recipes(top, work):
    profsh = os.path.join(top, "bin", "profsh")
    scripts = os.path.join(top, "share", "profsh", "scripts")
    r = run([profsh, os.path.join(scripts, "quickstart.lua")], cwd=work)
    check(r.returncode == 0 and "Self CPU %" in r.stdout,
          "the quickstart recipe reads its bundled sample (%s)" % (r.stderr[-300:] or r.stdout[:200]))
    r = run([profsh, os.path.join(scripts, "attach.lua")], cwd=work, env=dict(os.environ, TMPDIR=work))
    check(r.returncode == 0 and "nvtx_pipeline: 10 iterations" in r.stdout and "matmul_tile" in r.stdout,
          "the attach recipe runs the sample workload from lib/profsh (%s)" % (r.stderr[-300:] or r.stdout[-300:]))


def main():
    tarball, build, source = [os.path.abspath(a) for a in sys.argv[1:4]]
    promised = glibc_promised(source)
    check(promised is not None, "README says which glibc the bundle needs (%s)" % (promised,))
    with tempfile.TemporaryDirectory(prefix="profsh_bundle_") as work:
        with tarfile.open(tarball) as t:
            names = t.getnames()
            t.extractall(work)
        name = os.path.basename(tarball)[:-len(".tar.gz")]
        check({n.split("/")[0] for n in names} == {name}, "the tarball unpacks into one folder, %s" % name)
        top = os.path.join(work, name)
        files = files_under(top)
        expected = {"bin/profsh", "lib/profsh/python/sitecustomize.py", "lib/profsh/python/profsh_torch_fallback.py",
                    "lib/profsh/python/profsh_torch_build.py", "lib/profsh/python/profsh_job_map.py",
                    "lib/profsh/torch_plugin_src/engine/torch_plugin/operator_source.cpp",
                    "lib/profsh/torch_plugin_src/engine/collector/runtime/torch_api.h",
                    "share/profsh/scripts/quickstart.lua", "share/profsh/scripts/samples/alexnet_a100.pt.trace.json.gz",
                    "share/doc/profsh/README.md"}
        check(expected <= files, "the layout has the program, the PyTorch hook, the plugin's sources, the recipes "
              "(missing: %s)" % sorted(expected - files))
        check(not [f for f in files if "libprofsh_torch" in f], "no prebuilt PyTorch plugin in the bundle")
        helper = open(os.path.join(top, "lib/profsh/python/profsh_torch_build.py")).read()
        check('_PREBUILT = ""' in helper, "the plugin's build helper knows no prebuilt plugin")
        check_elf_files(top, promised)
        # profsh job map --dask finds its driver in lib/profsh/python (/bin/false as the Python:
        # the driver is found and started, and the run ends there).
        r = run([os.path.join(top, "bin", "profsh"), "job", "map", "--dask", "tcp://127.0.0.1:9",
                 "--python", "/bin/false", "rank-0.json", "-o", os.path.join(work, "job")])
        check(r.returncode == 1 and "the Dask driver (%s/lib/profsh/python/profsh_job_map.py)"
              % top in r.stderr, "job map --dask finds its driver in the bundle: %s" % r.stderr.strip())
        check_version(top, build, source)
        check_recipes(top, work)

        spaced = os.path.join(work, "with space")
        with tarfile.open(tarball) as t:
            t.extractall(spaced)
        profsh = os.path.join(spaced, name, "bin", "profsh")
        sample = os.path.join(spaced, name, "share/profsh/scripts/samples/alexnet_a100.pt.trace.json.gz")
        r = run([profsh, "-e", "print(#profsh.load(arg[1]):events{limit = 100000})", "--", sample])
        check(r.returncode == 0 and int(r.stdout.strip() or 0) > 0,
              "unpacked under a path with a space, profsh reads traces (%s)" % r.stderr[-200:])
        r = run([profsh, "run", "--", os.path.join(top, "lib/profsh/nvtx_pipeline"), "1"], cwd=work)
        check(r.returncode != 0 and "contains a space or a colon, which LD_PRELOAD cannot carry" in r.stderr
              and "nvtx_pipeline:" not in r.stdout,
              "there, profsh run refuses to start the workload, saying why (%d: %s)" % (r.returncode, r.stderr[-300:]))

        # cmake --install: the same files.
        prefix = os.path.join(work, "installed")
        r = run(["cmake", "--install", build, "--prefix", prefix])
        installed = files_under(prefix) if r.returncode == 0 else set()
        check(installed == files, "cmake --install installs the bundle's files (only installed: %s; only bundled: %s) %s"
              % (sorted(installed - files)[:5], sorted(files - installed)[:5], r.stderr[-300:]))

        # The .deb: the same files under /usr, glibc alone as dependency.
        r = run(["cpack", "-G", "DEB"], cwd=build)
        deb = re.search(r"package: (\S+\.deb) generated", r.stdout)
        check(r.returncode == 0 and deb, "cpack makes the .deb (%s)" % (r.stdout[-300:] + r.stderr[-300:]))
        if deb:
            deb = deb.group(1)
            depends = run(["dpkg-deb", "-f", deb, "Depends"]).stdout.strip()
            m = re.fullmatch(r"libc6 \(>= (\d+)\.(\d+)\)", depends)
            check(m and (int(m.group(1)), int(m.group(2))) <= promised, "the .deb depends on libc6 alone: %r" % depends)
            suggests = run(["dpkg-deb", "-f", deb, "Suggests"]).stdout.strip()
            check(suggests == "python3-distributed",
                  "the .deb suggests python3-distributed (job map --dask): %r" % suggests)
            unpacked = os.path.join(work, "deb")
            run(["dpkg-deb", "-x", deb, unpacked])
            in_usr = files_under(os.path.join(unpacked, "usr"))
            check(in_usr == files, "the .deb installs the bundle's files under /usr (differ: %s)" % sorted(in_usr ^ files)[:5])
            v = run([os.path.join(unpacked, "usr", "bin", "profsh"), "--version"]).stdout
            check("collector:        %s/usr/lib/profsh/libprofsh_collector.so" % unpacked in v,
                  "the .deb's profsh finds its collector in lib/profsh beside bin")
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
