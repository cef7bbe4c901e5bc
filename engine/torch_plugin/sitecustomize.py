# profsh's start-up hook for Python processes of a profiled workload. profsh puts this folder
# first on PYTHONPATH; Python imports this module at start-up. It waits for `import torch`,
# then loads profsh's operator source (libprofsh_torch.so) into the process: the one built with
# profsh when it was built for this very torch and Python, else one built for them on first use
# and cached (profsh_torch_build.py). Any other sitecustomize on the path runs too, as if this
# one were not there. The user's code is not changed and does not know.
import importlib.abc
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


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
        loader = spec.loader
        exec_module = loader.exec_module
        patched_instance = "exec_module" in getattr(loader, "__dict__", {})

        def exec_then_attach(module):
            # The loader may be shared (a zip importer serves a whole archive): put it back
            # before anything else runs, so that only torch's import attaches.
            if patched_instance:
                loader.exec_module = exec_module
            else:
                del loader.exec_module
            exec_module(module)
            _attach()

        loader.exec_module = exec_then_attach
        return spec


def _fall_back(reason):
    """torch's own profiler records the operators instead (profsh_torch_fallback.py beside this
    file); it says so, with the reason, on one line."""
    try:
        import profsh_torch_fallback
    except ImportError:
        print("profsh: operators not recorded: %s" % reason, file=sys.stderr)
        return
    profsh_torch_fallback.start(reason)  # never raises


def _attach():
    # PROFSH_TORCH_OPERATORS=torch.profiler: the user asks for torch's profiler (also how the
    # tests reach the fallback where the plugin would load).
    if os.environ.get("PROFSH_TORCH_OPERATORS") == "torch.profiler":
        _fall_back("PROFSH_TORCH_OPERATORS=torch.profiler")
        return
    try:
        import profsh_torch_build
        plugin, how = profsh_torch_build.find_or_build(sys.modules["torch"])
    except Exception as e:  # a bug of ours must not stop the user's program
        plugin, how = None, "profsh's operator source could not be found or built: %r" % (e,)
    if plugin is None:
        _fall_back(how)
        return
    try:
        import ctypes
        ctypes.CDLL(plugin, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        _fall_back("cannot load %s: %s" % (plugin, e))
        return
    try:
        import profsh_torch_fallback
        profsh_torch_fallback.note_operator_source(how)
    except Exception:
        pass


if os.environ.get("PROFSH_TORCH_PLUGIN") is not None:
    sys.meta_path.insert(0, _TorchWatcher())
_run_next_sitecustomize()
