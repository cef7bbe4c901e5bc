#!/bin/sh
# One entry point for a fresh Debian 12 machine (run as root, or with sudo available):
#   ./build.sh run    install what is needed, build, run the bundled NVTX sample workload under
#                     `profsh run` (its operator table; the trace goes to build/sample.profsh)
#   ./build.sh test   install what is needed, build, run every test (also under ASan+UBSan)
#   ./build.sh bench  build and print the benchmark figures (docs/PERFORMANCE.md)
#   ./build.sh dist   the release bundle dist/profsh-VERSION-linux-x86_64.tar.gz: unpack it
#                     anywhere and run bin/profsh (README, "Install from the release bundle")
#   ./build.sh deb    the same programs as a Debian package, dist/profsh_VERSION_amd64.deb
# Each step is idempotent: packages already installed are not fetched again, builds are
# incremental.
set -eu
cd "$(dirname "$0")"
ROOT=$(pwd)
JOBS=$(nproc 2>/dev/null || echo 2)

# The collector and the sample workload also need the NVTX v3 headers of the CUDA toolkit
# (/usr/local/cuda/include/nvtx3, present on the project's machines; no GPU or driver needed).
# The PyTorch operator source is built against Debian's libtorch and Python headers; the
# recipes in scripts/ run Debian's torch and torchvision (CPU only).
PACKAGES="build-essential cmake pkg-config liblua5.4-dev nlohmann-json3-dev zlib1g-dev \
googletest libgtest-dev libgmock-dev libbenchmark-dev python3 python3-dev util-linux \
libtorch-dev python3-torch python3-torchvision libsqlite3-dev libdw-dev libbz2-dev liblzma-dev"
# libdw-dev (elfutils; brings libelf-dev): engine/symbols unwinds and names native stacks.
# libbz2-dev, liblzma-dev: the static archives elfutils needs when build/ links it statically
# (PROFSH_PORTABLE, cmake/PortableLinking.cmake); libdw-dev does not depend on libbz2-dev.
# HTML reports inline a charting library the build installs with npm (engine/report/web): Debian's
# nodejs and npm, unless npm is there already (a nodesource nodejs conflicts with Debian's npm).
command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES nodejs npm"
# The flamegraph test runs the SVG's script in a headless Chromium; the collector's race tests
# build it with clang's ThreadSanitizer (llvm-symbolizer names the frames of a report); the
# SQLite export is checked with the sqlite3 client.
# debootstrap makes the Debian 13 root with PyTorch 2.6 for the torch tests' second environment.
# libc6-dbg: the symbols tests name libc's frames from Debian's detached debug files.
# python3-pandas, -numpy, -werkzeug run the TensorBoard profiler plugin's parsers offline
# (tests/tensorboard).
# python3-distributed: `profsh job map --dask` runs its driver with it, and the job map tests
# start a real Dask cluster (dask-scheduler, dask-worker) on 127.0.0.1 (tests/job_map).
TEST_PACKAGES="chromium clang llvm sqlite3 debootstrap libc6-dbg python3-pandas python3-numpy \
python3-werkzeug python3-distributed"
# The flamegraph benchmark measures peak memory with GNU time and fetches flamegraph.pl; the
# symbolisation benchmark compares with perf (linux-perf).
BENCH_PACKAGES="time perl curl ca-certificates linux-perf"

install_packages() {
  missing=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  echo "installing:$missing"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
  # shellcheck disable=SC2086
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
}

build() {  # build DIR [cmake options...]
  dir=$1
  shift
  cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS"
}

# build/ links its libraries and the C++ runtime statically (PROFSH_PORTABLE: only the linking
# differs), so the programs the tests check are the ones the release bundle ships.
PORTABLE=-DPROFSH_PORTABLE=ON

package() {  # package TGZ|DEB: the shipped programs of build/, packaged by CPack into dist/
  cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=Release $PORTABLE >/dev/null
  cmake --build "$ROOT/build" -j "$JOBS" --target profsh_shipped
  (cd "$ROOT/build" && cpack -G "$1" >/dev/null)
}

case "${1:-run}" in
  run)
    install_packages $PACKAGES
    build "$ROOT/build" $PORTABLE
    "$ROOT/build/profsh" run -o "$ROOT/build/sample.profsh" -- "$ROOT/build/nvtx_pipeline"
    ;;
  test)
    install_packages $PACKAGES $TEST_PACKAGES
    # The Debian 13 root (PyTorch 2.6) for the torch tests' second environment, made once and
    # reused; when it cannot be made the tests that need it say so and are skipped.
    "$ROOT/tests/torch2/debian13_root.sh" >/dev/null ||
      echo "build.sh: no Debian 13 root: the torch 2.6 tests will be skipped" >&2
    build "$ROOT/build" $PORTABLE
    # The release bundle is made once, by the bundle tests' first step (tests/bundle), and its
    # size printed here whatever the tests' outcome.
    status=0
    (cd "$ROOT/build" && ctest --output-on-failure -j "$JOBS") || status=$?
    for f in "$ROOT"/dist/profsh-*-linux-*.tar.gz; do
      [ -f "$f" ] && echo "release bundle: $f: $(wc -c < "$f") bytes"
    done
    [ "$status" -eq 0 ] || exit "$status"
    # The same suite under AddressSanitizer and UndefinedBehaviorSanitizer (the live recording
    # is skipped there: it only re-runs torch, which the first pass already did).
    build "$ROOT/build-asan" -DPROFSH_SANITIZE=ON -DPROFSH_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
    (cd "$ROOT/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --output-on-failure -j "$JOBS" -E golden_torch_live)
    ;;
  bench)
    install_packages $PACKAGES $BENCH_PACKAGES
    build "$ROOT/build" $PORTABLE
    package TGZ
    sh "$ROOT/bench/run_all.sh" "$ROOT/build"
    ;;
  dist)
    install_packages $PACKAGES
    package TGZ
    ls -l "$ROOT"/dist/profsh-*-linux-*.tar.gz
    ;;
  deb)
    install_packages $PACKAGES
    package DEB
    ls -l "$ROOT"/dist/profsh_*.deb
    ;;
  *)
    echo "usage: $0 run|test|bench|dist|deb" >&2
    exit 2
    ;;
esac
