#!/bin/sh
# tests/torch/check_torch.py in the Debian 13 root: profsh's operator source, built on first use
# for torch 2.6 / Python 3.13, against torch.profiler (Kineto) on the same script.
#   check_torch_debian13.sh PROFSH TESTS_DIR CACHE   (exit 77: no root)
# CACHE is where torch_plugin_build left the plugin it built there (built now when it is not).
set -eu
PROFSH=$1 TESTS=$2
ROOT=$("$TESTS/torch2/debian13_root.sh") || { echo "skip: no Debian 13 root"; exit 77; }
export PROFSH_CACHE="$3" PROFSH_TORCH_PREBUILT=0
# torch 2.6 on Python 3.13 crashes with with_stack=True (pytorch/pytorch#144094): torch records
# no stacks there, and profsh's module frames are checked against the workload's modules.
export PROFSH_TORCH_WRAP="$TESTS/torch2/in_root.sh $ROOT" PROFSH_TORCH_PYTHON=/usr/bin/python3 PROFSH_TORCH_WITH_STACK=0
exec /usr/bin/python3 "$TESTS/torch/check_torch.py" "$PROFSH" "$TESTS/torch"
