#!/bin/sh
# Runs a command inside the Debian 13 root (tests/torch2/debian13_root.sh), with the project's
# checkout (its builds included), ../shared and /tmp bind-mounted at the same paths, so that the
# profsh built here on Debian 12 runs there unchanged and paths mean the same on both sides.
#   tests/torch2/in_root.sh ROOT COMMAND [ARG...]
# The mounts live in a private mount namespace (unshare): they vanish when the command ends, and
# several of these may run at once. Extra folders to share: PROFSH_ROOT_BINDS="dir1 dir2".
set -eu
[ $# -ge 2 ] || { echo "usage: $0 ROOT COMMAND [ARG...]" >&2; exit 2; }
ROOT=$1
shift
[ -d "$ROOT/usr" ] || { echo "in_root.sh: $ROOT is not a root file system" >&2; exit 2; }
CHECKOUT=$(cd "$(dirname "$0")/../.." && pwd -P)
BINDS="$CHECKOUT /tmp"
[ -d "$CHECKOUT/../shared" ] && BINDS="$BINDS $(cd "$CHECKOUT/../shared" && pwd -P)"
BINDS="$BINDS ${PROFSH_ROOT_BINDS:-}"
export PROFSH_IN_ROOT_DIR="$ROOT" PROFSH_IN_ROOT_BINDS="$BINDS" PROFSH_IN_ROOT_CWD="$(pwd -P)"
exec unshare --mount --propagation private sh -euc '
  r=$PROFSH_IN_ROOT_DIR
  mount -t proc proc "$r/proc"
  mount --rbind /dev "$r/dev"
  for d in $PROFSH_IN_ROOT_BINDS; do
    mkdir -p "$r$d"
    mount --rbind "$d" "$r$d"
  done
  cd "$r"
  exec chroot "$r" sh -c "cd \"\$0\" 2>/dev/null || cd /; exec \"\$@\"" "$PROFSH_IN_ROOT_CWD" "$@"
' in_root.sh "$@"
