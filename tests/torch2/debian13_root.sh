#!/bin/sh
# Makes (once) and prints the path of a Debian 13 root with PyTorch 2.6 (Kineto, Python 3.13),
# libtorch's headers and g++: the second real PyTorch the torch tests run against.
#   tests/torch2/debian13_root.sh [DIR [PACKAGES]]
# DIR defaults to $PROFSH_DEBIAN13_ROOT, else ~/.cache/profsh/debian13-root. PACKAGES (one
# argument, space-separated) replaces the list below; "" leaves minbase alone (the release
# bundle's tests, tests/bundle, run in such a root). The root is made with
# debootstrap from the Debian mirror this machine's apt already uses, and is reused once it is
# complete (a stamp file marks that). Needs root (debootstrap and chroot).
set -eu
DIR=${1:-${PROFSH_DEBIAN13_ROOT:-${HOME:-/root}/.cache/profsh/debian13-root}}
STAMP="$DIR/.profsh-root-complete"
# torch and what builds against it; then what the profsh built on Debian 12 links.
# torch.compile's Inductor imports setuptools to build its C++ kernels.
PACKAGES="python3-torch python3-torchvision libtorch-dev g++ python3-setuptools liblua5.4-0 zlib1g libsqlite3-0 libdw1"
[ $# -ge 2 ] && PACKAGES=$2

# The stamp holds the package list the root was completed with: a root made by an older list
# gets what is new installed into it.
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PACKAGES" ]; then
  echo "$DIR"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "debian13_root.sh: making the Debian 13 root needs root (debootstrap, chroot)" >&2
  exit 77
fi
if [ -f "$STAMP" ] && [ -n "$PACKAGES" ]; then
  echo "installing into the Debian 13 root $DIR: $PACKAGES" >&2
  # shellcheck disable=SC2086
  cp /etc/resolv.conf "$DIR/etc/resolv.conf" 2>/dev/null || true
  "$(dirname "$0")/in_root.sh" "$DIR" env DEBIAN_FRONTEND=noninteractive sh -c \
    "apt-get update -q && apt-get install -y -q --no-install-recommends $PACKAGES && apt-get clean" >&2
  echo "$PACKAGES" > "$STAMP"
  echo "$DIR"
  exit 0
fi

mirror() {  # the first Debian mirror of this machine's apt sources (deb822 or one-line form)
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    m=$(sed -n -e 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' \
               -e 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p' "$f" |
        grep -v -e security -e '^$' | head -n 1)
    [ -n "$m" ] && { echo "$m"; return 0; }
  done
  echo http://deb.debian.org/debian
}

if ! command -v debootstrap >/dev/null 2>&1; then
  env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2 ||
    { env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 &&
      env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2; }
fi

MIRROR=$(mirror)
SIZE="about 600 MB, 2-3 minutes"
[ -z "$PACKAGES" ] && SIZE="minbase alone, about 180 MB, a minute"
echo "making a Debian 13 root in $DIR from $MIRROR ($SIZE)" >&2
# A half-made root (an interrupted earlier run) is started again from nothing.
rm -rf "$DIR.partial"
mkdir -p "$(dirname "$DIR")"
debootstrap --variant=minbase trixie "$DIR.partial" "$MIRROR" >&2
mount_proc() { mountpoint -q "$DIR.partial/proc" || mount -t proc proc "$DIR.partial/proc"; }
mount_proc
trap 'umount "$DIR.partial/proc" 2>/dev/null || true' EXIT
cp /etc/resolv.conf "$DIR.partial/etc/resolv.conf" 2>/dev/null || true
if [ -n "$PACKAGES" ]; then
  chroot "$DIR.partial" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  # shellcheck disable=SC2086
  chroot "$DIR.partial" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends $PACKAGES >&2
fi
chroot "$DIR.partial" apt-get clean >&2
umount "$DIR.partial/proc"
trap - EXIT
rm -rf "$DIR"
mv "$DIR.partial" "$DIR"
echo "$PACKAGES" > "$STAMP"
echo "$DIR"
