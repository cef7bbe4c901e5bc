# profsh's start-up hook for Python processes of a profiled workload. profsh puts this folder
# first on PYTHONPATH; Python imports this module at start-up. It waits for `import torch`,
# then loads profsh's operator source (libprofsh_torch.so) into the process. Any other
# sitecustomize on the path runs too, as if this one were not there. The user's code is not
# changed and does not know.
import importlib.abc
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# What the operator source was built against (filled in by CMake): it reads this Python's frames
# and links this torch, so any other would crash or load a second torch.
_BUILT_FOR_PYTHON = "@PROFSH_PYTHON_SERIES@"
_BUILT_FOR_TORCH = "@PROFSH_TORCH_SERIES@"


def _run_next_sitecustomize():
    saved_path = sys.path[:]
    mine = sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
        spec = importlib.util.find_spec("sitecustomize")
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = module
            spec.loader.exec_module(module)
    except Exception as e:  # theirs failing must not stop the program, as with Python's own hook
        print("profsh: the next sitecustomize failed: %r" % (e,), file=sys.stderr)
    finally:
        sys.path[:] = saved_path
        if mine is not None:
            sys.modules["sitecustomize"] = mine


class _TorchWatcher(importlib.abc.MetaPathFinder):
    """Finds torch like the path finder would, and loads the operator source once it ran."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_attach(module):
            exec_module(module)
            _attach()

        spec.loader.exec_module = exec_then_attach
        return spec


def _fall_back(reason):
    """torch's own profiler records the operators instead (profsh_torch_fallback.py)."""
    try:
        import profsh_torch_fallback
        profsh_torch_fallback.start(reason)
    except Exception as e:
        print("profsh: operators not recorded (%s), and the fallback failed: %r" % (reason, e), file=sys.stderr)


def _attach():
    plugin = os.environ.get("PROFSH_TORCH_PLUGIN")
    if not plugin:
        return
    # PROFSH_TORCH_OPERATORS=torch.profiler: the user asks for torch's profiler (also how the
    # tests reach the fallback where the plugin would load).
    if os.environ.get("PROFSH_TORCH_OPERATORS") == "torch.profiler":
        _fall_back("PROFSH_TORCH_OPERATORS=torch.profiler")
        return
    python = "%d.%d" % sys.version_info[:2]
    torch = sys.modules.get("torch")
    version = str(getattr(torch, "__version__", ""))
    if python != _BUILT_FOR_PYTHON or not (version == _BUILT_FOR_TORCH or version.startswith(_BUILT_FOR_TORCH + ".")):
        _fall_back("profsh's PyTorch source was built for Python %s and torch %s, this is Python %s with torch %s"
                   % (_BUILT_FOR_PYTHON, _BUILT_FOR_TORCH, python, version or "?"))
        return
    try:
        import ctypes
        ctypes.CDLL(plugin, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        _fall_back("cannot attach to torch (%s): %s" % (plugin, e))
        return
    try:
        import profsh_torch_fallback
        profsh_torch_fallback.note_operator_source("profsh operator source (%s)" % plugin)
    except Exception:
        pass


if os.environ.get("PROFSH_TORCH_PLUGIN"):
    sys.meta_path.insert(0, _TorchWatcher())
_run_next_sitecustomize()
