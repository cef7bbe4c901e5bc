"""Stand-in for tensorboard.plugins.base_plugin (TensorBoard's plugin registration).

torch_tb_profiler's TorchProfilerPlugin derives from TBPlugin, takes a TBContext and returns a
FrontendMetadata from frontend_metadata(). Nothing of them reaches the parsers or the route
functions' output: TBPlugin.__init__ keeps nothing the plugin reads, TBContext carries the
logdir, and FrontendMetadata only tells TensorBoard's web page where index.js is.
"""


class TBPlugin:
    def __init__(self, context):
        pass


class TBContext:
    def __init__(self, logdir="", flags=None):
        self.logdir = logdir
        self.flags = flags


class FrontendMetadata:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)
