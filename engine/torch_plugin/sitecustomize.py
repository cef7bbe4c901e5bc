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


def _attach():
    plugin = os.environ.get("PROFSH_TORCH_PLUGIN")
    if not plugin:
        return
    python = "%d.%d" % sys.version_info[:2]
    torch = sys.modules.get("torch")
    version = str(getattr(torch, "__version__", ""))
    if python != _BUILT_FOR_PYTHON or not (version == _BUILT_FOR_TORCH or version.startswith(_BUILT_FOR_TORCH + ".")):
        print("profsh: operators not recorded: profsh's PyTorch source was built for Python %s and torch %s, "
              "this is Python %s with torch %s" % (_BUILT_FOR_PYTHON, _BUILT_FOR_TORCH, python, version or "?"),
              file=sys.stderr)
        return
    try:
        import ctypes
        ctypes.CDLL(plugin, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        print("profsh: cannot attach to torch (%s): %s" % (plugin, e), file=sys.stderr)


if os.environ.get("PROFSH_TORCH_PLUGIN"):
    sys.meta_path.insert(0, _TorchWatcher())
_run_next_sitecustomize()
