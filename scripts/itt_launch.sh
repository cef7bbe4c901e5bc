#!/bin/bash
# The seed ITT recipe's launch.sh: VTune (or profsh) attaches to this script, not to Python.
#   profsh run --activities itt,torch -- bash scripts/itt_launch.sh
BASEFOLDER=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)
cd "${BASEFOLDER}"
exec "${PROFSH_PYTHON:-python3}" itt_sample.py
