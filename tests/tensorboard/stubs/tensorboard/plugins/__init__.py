"""Stand-in for the `tensorboard` package: torch_tb_profiler's plugin.py imports only
`tensorboard.plugins.base_plugin`, for the server's plugin registration (see ../README.md)."""
