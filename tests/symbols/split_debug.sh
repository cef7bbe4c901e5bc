#!/bin/sh
# Makes a stripped copy of a binary with its debug info in a separate file, the two ways a
# distribution ships them:
#   split_debug.sh build-id  IN OUT DEBUG_ROOT   debug file at DEBUG_ROOT/.build-id/xx/yyyy.debug,
#                                                its sections compressed (as Fedora ships them)
#   split_debug.sh debuglink IN OUT              debug file OUT.debug beside OUT, named by
#                                                OUT's .gnu_debuglink
set -eu
mode=$1 in=$2 out=$3
case $mode in
  build-id)
    root=$4
    id=$(readelf -n "$in" | awk '/Build ID:/ {print $3}')
    [ -n "$id" ] || { echo "split_debug.sh: $in has no build id" >&2; exit 1; }
    dir="$root/.build-id/$(echo "$id" | cut -c1-2)"
    mkdir -p "$dir"
    objcopy --only-keep-debug --compress-debug-sections=zlib "$in" "$dir/$(echo "$id" | cut -c3-).debug"
    strip --strip-all -o "$out" "$in"
    ;;
  debuglink)
    objcopy --only-keep-debug "$in" "$out.debug"
    strip --strip-all -o "$out.tmp" "$in"
    (cd "$(dirname "$out")" && objcopy --add-gnu-debuglink="$(basename "$out").debug" \
      "$(basename "$out").tmp" "$(basename "$out")")
    rm -f "$out.tmp"
    ;;
  *) echo "split_debug.sh: unknown mode $mode" >&2; exit 2 ;;
esac
