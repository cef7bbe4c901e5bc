# Finds, or builds once and caches, profsh's operator source (libprofsh_torch.so) for the torch
# and the Python of this process. Used by sitecustomize.py right after `import torch`.
#
# A plugin links one torch and reads one Python's frames through that Python's headers, so it
# is used only where all of these are the ones it was built for: the torch version and its
# library (libtorch_cpu), the Python version, and torch's C++ ABI (_GLIBCXX_USE_CXX11_ABI).
#  1. The one built with profsh (CMake, against the build machine's libtorch), when it matches;
#     PROFSH_TORCH_PREBUILT=0 leaves it aside.
#  2. One in the cache, $PROFSH_CACHE or ~/.cache/profsh, torch_plugin/, named by all of the
#     above and a hash of the plugin's sources (a new profsh builds a new one).
#  3. Else it is built there now from the sources installed with profsh (torch_plugin_src/
#     beside the binary) with the compiler found on the machine ($CXX, else c++ or g++), the
#     way torch.utils.cpp_extension builds extensions: torch's include and library paths, its
#     C++ ABI, Python's headers. One line says so. Several processes starting at once (ranks)
#     build it once: the others wait on the lock file and load what the first one made.
import contextlib
import fcntl
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))
# Filled in by CMake: the prebuilt plugin and what it was built against ("" when none was).
_PREBUILT = "@PROFSH_PREBUILT_PLUGIN@"
_PREBUILT_TORCH = "@PROFSH_PREBUILT_TORCH@"  # torch's version, as libtorch's CMake files say
_PREBUILT_PYTHON = "@PROFSH_PREBUILT_PYTHON@"  # "3.11"
_PREBUILT_ABI = "@PROFSH_PREBUILT_ABI@"  # "0" or "1"
_PREBUILT_LIBTORCH = "@PROFSH_PREBUILT_LIBTORCH@"  # libtorch_cpu's real path
_SOURCES = os.path.join(os.path.dirname(_HERE), "torch_plugin_src")
# As a release build of torch's: NDEBUG also compiles out torch's debug-only asserts in its
# headers (RecordFunction::inputs() asserts on ranges whose inputs torch did not keep).
_FLAGS = ["-std=c++17", "-O2", "-DNDEBUG", "-fPIC", "-shared", "-w"]


class BuildFailed(Exception):
    pass


def _release(version):
    """'1.13.0' of '1.13.0a0+git...' or '2.6.0+debian'."""
    m = re.match(r"\d+(\.\d+)*", version)
    return m.group(0) if m else version


def _libtorch(torch):
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    return os.path.realpath(path) if os.path.exists(path) else ""


def _source_files():
    files = []
    for root, _, names in os.walk(_SOURCES):
        files += [os.path.join(root, n) for n in names if n.endswith((".cpp", ".h"))]
    return sorted(files)


def _cache_dir():
    base = os.environ.get("PROFSH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "profsh")
    return os.path.join(base, "torch_plugin")


def _compiler():
    for name in [os.environ.get("CXX")] + ["c++", "g++"]:
        if name:
            path = shutil.which(name.split()[0]) if not os.path.isabs(name.split()[0]) else name.split()[0]
            if path:
                return [path] + name.split()[1:]
    return None


def _build_command(torch, abi, output, sources):
    try:
        # Its import talks (torch 1.13 prints where it looked for CUDA): the build says one line.
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            from torch.utils import cpp_extension
            includes, libraries = cpp_extension.include_paths(), cpp_extension.library_paths()
    except Exception as e:  # an install without cpp_extension's helpers: torch's own folders
        raise BuildFailed("torch.utils.cpp_extension is not usable (%r)" % (e,))
    python_include = sysconfig.get_paths()["include"]
    missing = [h for h in [os.path.join(python_include, "Python.h")] +
               [os.path.join(d, "ATen", "record_function.h") for d in includes[:1]] if not os.path.exists(h)]
    if missing:
        raise BuildFailed("headers missing: %s (install libtorch's and Python's development files)"
                          % ", ".join(missing))
    compiler = _compiler()
    if compiler is None:
        raise BuildFailed("no C++ compiler ($CXX, c++ or g++ on PATH)")
    command = compiler + _FLAGS + ["-D_GLIBCXX_USE_CXX11_ABI=%s" % abi, "-I" + _SOURCES]
    command += ["-I" + d for d in includes] + ["-I" + python_include]
    command += [s for s in sources if s.endswith(".cpp")]
    for d in libraries:
        command += ["-L" + d, "-Wl,-rpath," + d]
    return command + ["-lc10", "-ltorch_cpu", "-ldl", "-o", output]


def _compile(torch, abi, target, sources, log, announcement):
    """Builds into a temporary file beside target, then renames it (atomic: another process
    sees no plugin or a whole one). The announcement is printed once a compiler and the headers
    are found: without them, the fallback's line alone says why."""
    fd, temporary = tempfile.mkstemp(prefix=os.path.basename(target) + ".", suffix=".tmp",
                                     dir=os.path.dirname(target))
    os.close(fd)
    try:
        command = _build_command(torch, abi, temporary, sources)
        print(announcement, file=sys.stderr, flush=True)
        # The compiler is not part of the workload: profsh's collector is not loaded into it.
        env = {k: v for k, v in os.environ.items()
               if k != "LD_PRELOAD" and not k.startswith("PROFSH_") and k not in
               ("NVTX_INJECTION64_PATH", "INTEL_LIBITTNOTIFY64", "PYTHONPATH")}
        try:
            r = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, env=env)
        except OSError as e:
            raise BuildFailed("cannot run the compiler %s: %s" % (command[0], e))
        with open(log, "wb") as f:
            f.write((" ".join(command) + "\n").encode() + r.stdout)
        if r.returncode != 0:
            errors = [l for l in r.stdout.decode(errors="replace").splitlines() if "error" in l]
            raise BuildFailed("%s exited with status %d%s; the log is %s"
                              % (command[0], r.returncode, (": " + errors[0].strip()[:200]) if errors else "",
                                 log))
        os.rename(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def find_or_build(torch):
    """(path of the plugin, a line saying which) or (None, why there is none)."""
    version = str(getattr(torch, "__version__", ""))
    python = "%d.%d" % sys.version_info[:2]
    abi = "1" if getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", False) else "0"
    libtorch = _libtorch(torch)
    what = "torch %s, Python %s" % (version, python)
    if (_PREBUILT and os.environ.get("PROFSH_TORCH_PREBUILT", "1") != "0" and os.path.exists(_PREBUILT)
            and _release(version) == _PREBUILT_TORCH and python == _PREBUILT_PYTHON and abi == _PREBUILT_ABI
            and libtorch == _PREBUILT_LIBTORCH):
        return _PREBUILT, "profsh operator source (%s, built with profsh)" % what
    if not libtorch:
        return None, "no libtorch_cpu.so in this torch (%s) to build against" % what
    sources = _source_files()
    if not sources:
        return None, "the operator source's sources are missing (%s)" % _SOURCES
    digest = hashlib.sha256((libtorch + " ".join(_FLAGS)).encode())
    for path in sources:
        digest.update(os.path.relpath(path, _SOURCES).encode())
        with open(path, "rb") as f:
            digest.update(f.read())
    name = "libprofsh_torch-torch%s-py%s-abi%s-%s.so" % (re.sub(r"[^A-Za-z0-9.]", "_", version), python, abi,
                                                        digest.hexdigest()[:16])
    cache = _cache_dir()
    target = os.path.join(cache, name)
    cached = "profsh operator source (%s, cached in %s)" % (what, cache)
    if os.path.exists(target):
        return target, cached
    try:
        os.makedirs(cache, exist_ok=True)
        lock = open(target + ".lock", "a")
    except OSError as e:
        return None, "cannot use the cache %s: %s" % (cache, e)
    failed = target[:-3] + ".failed"
    with lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            waited = False
        except OSError:  # another process is building it: wait for it
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            waited = True
        if os.path.exists(target):
            return target, cached
        if waited and os.path.exists(failed):  # it failed just now: not again in every rank
            with open(failed) as f:
                return None, f.read().strip()
        announcement = ("profsh: building the PyTorch operator source for torch %s / Python %s (once, cached in %s)"
                        % (version, python, cache))
        try:
            _compile(torch, abi, target, sources, target[:-3] + ".log", announcement)
        except (BuildFailed, OSError) as e:
            reason = "building it for %s failed: %s" % (what, e)
            with open(failed, "w") as f:
                f.write(reason + "\n")
            return None, reason
        if os.path.exists(failed):
            os.unlink(failed)
    return target, "profsh operator source (%s, built on first use)" % what
