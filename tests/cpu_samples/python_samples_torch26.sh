#!/bin/sh
# check_python_samples.py with Python 3.13 and torch 2.6 in the Debian 13 root (tests/torch2):
# the Debian-12-built profsh samples a workload whose operator source is built on first use there.
# Exit 77 (skip) when the root cannot be made (not root, no debootstrap or mirror).
#   python_samples_torch26.sh PROFSH
set -u
profsh=$1
here=$(cd "$(dirname "$0")" && pwd -P)
root=$("$here/../torch2/debian13_root.sh") || { rc=$?; [ $rc -eq 77 ] && echo "no Debian 13 root; skipping"; exit $rc; }
exec "$here/../torch2/in_root.sh" "$root" /usr/bin/python3 "$here/check_python_samples.py" "$profsh" /usr/bin/python3
