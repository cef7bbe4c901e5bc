#!/bin/sh
# tests/flamegraph/check_backward_stacks.py in the Debian 13 root: the Python-stack flamegraph of
# a backward pass recorded by profsh's operator source built for torch 2.6 / Python 3.13.
#   check_backward_debian13.sh PROFSH TESTS_DIR CACHE   (exit 77: no root)
# CACHE is where torch_plugin_build left the plugin it built there (built now when it is not).
set -eu
PROFSH=$1 TESTS=$2
ROOT=$("$TESTS/torch2/debian13_root.sh") || { echo "skip: no Debian 13 root"; exit 77; }
export PROFSH_CACHE="$3" PROFSH_TORCH_PREBUILT=0
export PROFSH_TORCH_WRAP="$TESTS/torch2/in_root.sh $ROOT" PROFSH_TORCH_PYTHON=/usr/bin/python3
exec /usr/bin/python3 "$TESTS/flamegraph/check_backward_stacks.py" "$PROFSH" "$TESTS/programs"
