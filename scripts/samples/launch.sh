#!/bin/sh
# A launch script as workloads often have one: profsh attaches to everything it starts.
#   build/profsh run -- sh scripts/samples/launch.sh
# Runs the bundled NVTX sample (build/nvtx_pipeline, built by ./build.sh run).
here=$(dirname "$0")
exec "${PROFSH_SAMPLE:-$here/../../build/nvtx_pipeline}" "$@"
