"""The TensorBoard profiler plugin (torch-tb-profiler) run offline, without TensorBoard.

The plugin's source is pytorch/kineto at commit 041e7ce, tb_plugin/ (the last commit that has
it). `plugin_dir()` extracts it from a local clone of kineto into a cache folder; nothing of it is
vendored into profsh. The two packages it imports only for TensorBoard's server
(`tensorboard.plugins.base_plugin`, `absl.logging`) come from ./stubs (README.md lists what
each stub does). Everything else is the plugin's own code run by Debian's python3-pandas,
python3-numpy and python3-werkzeug: `TorchProfilerPlugin` scans the log folder and loads each run
with its `RunLoader` (one parsing process per trace file, as under TensorBoard), and its route
functions answer requests made through werkzeug's test client.

    with Plugin(logdir) as plugin:
        plugin.runs()                                   # ['run_a', 'run_b']
        plugin.get('overview', run='run_a', worker='worker0', span='1')   # response bytes

Environment: PROFSH_KINETO_REPO (default /work/.mirror/pytorch+kineto/repo) is the kineto clone,
PROFSH_TB_PLUGIN_CACHE (default ~/.cache/profsh) where tb_plugin-041e7ce is extracted.
"""
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings

KINETO_COMMIT = "041e7ce"
ROUTE_PREFIX = "/data/plugin/pytorch_profiler/"
HERE = os.path.dirname(os.path.abspath(__file__))


class PluginUnavailable(Exception):
    """The plugin's source or the Python packages it needs are not on this machine."""


def kineto_repo():
    return os.environ.get("PROFSH_KINETO_REPO", "/work/.mirror/pytorch+kineto/repo")


def plugin_dir():
    """tb_plugin/ of kineto at KINETO_COMMIT, extracted once into the cache folder."""
    cache = os.environ.get("PROFSH_TB_PLUGIN_CACHE",
                           os.path.join(os.path.expanduser("~"), ".cache", "profsh"))
    target = os.path.join(cache, f"tb_plugin-{KINETO_COMMIT}")
    if os.path.isfile(os.path.join(target, "tb_plugin", ".extracted")):
        return os.path.join(target, "tb_plugin")
    repo = kineto_repo()
    if not os.path.exists(repo):
        raise PluginUnavailable(f"no kineto clone at {repo} (set PROFSH_KINETO_REPO)")
    archive = subprocess.run(["git", "-C", repo, "archive", KINETO_COMMIT, "tb_plugin"],
                             capture_output=True)
    if archive.returncode != 0:
        raise PluginUnavailable(f"git archive {KINETO_COMMIT} tb_plugin in {repo}: "
                                + archive.stderr.decode(errors="replace").strip())
    os.makedirs(cache, exist_ok=True)
    # Extract beside the target and rename, so that concurrent tests never see half a tree.
    staging = tempfile.mkdtemp(prefix=f"tb_plugin-{KINETO_COMMIT}.", dir=cache)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(staging)
    open(os.path.join(staging, "tb_plugin", ".extracted"), "w").close()
    try:
        os.rename(staging, target)
    except OSError:  # another process extracted it first
        subprocess.run(["rm", "-rf", staging], check=False)
    return os.path.join(target, "tb_plugin")


def import_plugin():
    """The plugin's modules, imported with the stubs in front of sys.path. sys.path is what the
    parsing processes (started with `spawn`) inherit, so they see the same stubs."""
    try:
        import pandas  # noqa: F401
        import numpy  # noqa: F401
        import werkzeug  # noqa: F401
    except ImportError as e:
        raise PluginUnavailable(f"{e} (Debian: apt-get install python3-pandas python3-numpy "
                                "python3-werkzeug)")
    root = plugin_dir()
    for path in (root, os.path.join(HERE, "stubs")):
        if path not in sys.path:
            sys.path.insert(0, path)
    os.environ.setdefault("TORCH_PROFILER_LOG_LEVEL", "ERROR")
    # Its deprecation notice, printed by every parsing process; the environment reaches them.
    notice = "ignore:The TensorBoard integration with the PyTorch profiler"
    os.environ["PYTHONWARNINGS"] = notice
    warnings.filterwarnings("ignore", message=notice.split(":", 1)[1])
    import torch_tb_profiler.plugin as plugin_module
    return plugin_module


def sample_runs_dir():
    """The plugin's two sample runs (resnet50_num_workers_0 and _4), as its end-to-end test
    reads them."""
    return os.path.join(plugin_dir(), "samples")


class Plugin:
    """TorchProfilerPlugin on one log folder, its runs loaded, answering route requests."""

    def __init__(self, logdir, timeout_s=600):
        plugin_module = import_plugin()
        from werkzeug.test import Client
        from werkzeug.wrappers import Response

        base_plugin = sys.modules["tensorboard.plugins.base_plugin"]
        context = base_plugin.TBContext(logdir=os.path.abspath(logdir), flags=None)
        self._plugin = plugin_module.TorchProfilerPlugin(context)
        self._apps = self._plugin.get_plugin_apps()
        self._client = Client(self._dispatch, Response)
        expected = len(list(self._plugin._get_run_dirs()))
        deadline = time.monotonic() + timeout_s
        # The plugin's monitor thread finds the run folders at once and loads each in a thread.
        while len(self.runs()) < expected or self._plugin.is_loading:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the plugin loaded {self.runs()} of {expected} runs "
                                   f"in {logdir} within {timeout_s} s")
            time.sleep(0.2)

    def _dispatch(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        app = self._apps.get("/" + path[len(ROUTE_PREFIX):]) if path.startswith(ROUTE_PREFIX) else None
        if app is None:
            start_response("404 NOT FOUND", [("Content-Type", "text/plain")])
            return [b"no such route"]
        return app(environ, start_response)

    def request(self, route, **params):
        """(status code, body bytes) of GET ROUTE_PREFIX + route with the query params; a
        gzip-encoded body (the memory and module routes) comes back decompressed."""
        response = self._client.get(ROUTE_PREFIX + route, query_string=params)
        body = response.get_data()
        if response.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        return response.status_code, body

    def get(self, route, **params):
        status, body = self.request(route, **params)
        if status != 200:
            raise RuntimeError(f"{route} {params}: HTTP {status}: {body[:300]!r}")
        return body

    def get_json(self, route, **params):
        return json.loads(self.get(route, **params))

    def runs(self):
        return json.loads(self.request("runs")[1])["runs"]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
