#!/bin/sh
# Started by nvtx_workload's "processes" mode: a shell that replaces itself with the workload
# (the same pid, a new image), as launch scripts do with `exec python train.py`.
exec "$1" nested 2 50
