#!/bin/sh
# The bundle tests' first step: the release bundle made from this build as `./build.sh dist`
# makes it (CPack, TGZ), once per test run, and its size printed. Fails above the 30 MB goal.
#   tests/bundle/make_bundle.sh BUILD_DIR TARBALL
set -eu
build=$1
tarball=$2
rm -f "$tarball"
(cd "$build" && cpack -G TGZ >/dev/null)
[ -f "$tarball" ] || { echo "FAIL cpack made no $tarball" >&2; exit 1; }
size=$(wc -c < "$tarball")
echo "release bundle: $tarball: $size bytes ($((size / 1000000)) MB; goal under 30 MB)"
[ "$size" -lt 30000000 ] || { echo "FAIL the bundle is over 30 MB" >&2; exit 1; }
