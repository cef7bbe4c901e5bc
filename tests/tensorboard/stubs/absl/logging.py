"""Stand-in for absl.logging: the plugin's parsing processes call use_absl_handler() so that
TensorBoard's log handler prints their messages. Without it they log through Python's logging
module as configured by the harness; the parsed data is the same."""


def use_absl_handler():
    pass
