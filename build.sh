#!/bin/sh
# One entry point for a fresh Debian 12 machine (run as root, or with sudo available):
#   ./build.sh run    install what is needed, build, run the bundled NVTX sample workload under
#                     `profsh run` (its operator table; the trace goes to build/sample.profsh)
#   ./build.sh test   install what is needed, build, run every test (also under ASan+UBSan)
#   ./build.sh bench  build and print the benchmark figures (docs/PERFORMANCE.md)
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
libtorch-dev python3-torch python3-torchvision libsqlite3-dev libdw-dev"
# libdw-dev (elfutils; brings libelf-dev): engine/symbols unwinds and names native stacks.
# The flamegraph test runs the SVG's script in a headless Chromium; the collector's race tests
# build it with clang's ThreadSanitizer (llvm-symbolizer names the frames of a report); the
# SQLite export is checked with the sqlite3 client.
# debootstrap makes the Debian 13 root with PyTorch 2.6 for the torch tests' second environment.
# libc6-dbg: the symbols tests name libc's frames from Debian's detached debug files.
TEST_PACKAGES="chromium clang llvm sqlite3 debootstrap libc6-dbg"
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

case "${1:-run}" in
  run)
    install_packages $PACKAGES
    build "$ROOT/build"
    "$ROOT/build/profsh" run -o "$ROOT/build/sample.profsh" -- "$ROOT/build/nvtx_pipeline"
    ;;
  test)
    install_packages $PACKAGES $TEST_PACKAGES
    # The Debian 13 root (PyTorch 2.6) for the torch tests' second environment, made once and
    # reused; when it cannot be made the tests that need it say so and are skipped.
    "$ROOT/tests/torch2/debian13_root.sh" >/dev/null ||
      echo "build.sh: no Debian 13 root: the torch 2.6 tests will be skipped" >&2
    build "$ROOT/build"
    (cd "$ROOT/build" && ctest --output-on-failure -j "$JOBS")
    # The same suite under AddressSanitizer and UndefinedBehaviorSanitizer (the live recording
    # is skipped there: it only re-runs torch, which the first pass already did).
    build "$ROOT/build-asan" -DPROFSH_SANITIZE=ON -DPROFSH_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
    (cd "$ROOT/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --output-on-failure -j "$JOBS" -E golden_torch_live)
    ;;
  bench)
    install_packages $PACKAGES $BENCH_PACKAGES
    build "$ROOT/build"
    sh "$ROOT/bench/run_all.sh" "$ROOT/build"
    ;;
  *)
    echo "usage: $0 run|test|bench" >&2
    exit 2
    ;;
esac
