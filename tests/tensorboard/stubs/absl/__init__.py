"""Stand-in for the `absl` package (absl-py): torch_tb_profiler imports only `absl.logging`."""
