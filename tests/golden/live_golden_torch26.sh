#!/bin/sh
# Records the torch 2.6 golden cases again in the Debian 13 root (tests/torch2) and checks profsh
# against them, so that agreement with torch 2.x does not rest on the committed recordings alone.
# Exit 77 (skip) when the root cannot be made (not root, no debootstrap or mirror).
#   live_golden_torch26.sh PROFSH GOLDEN_DIR
set -u
profsh=$1
here=$(cd "$2" && pwd -P)
torch2="$here/../torch2"
root=$("$torch2/debian13_root.sh") || { rc=$?; [ $rc -eq 77 ] && echo "no Debian 13 root; skipping"; exit $rc; }
# The folder must be visible in the root: in_root.sh mounts the checkout and /tmp there.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for script in record_torch26.py record_torch26_events.py; do
  if ! "$torch2/in_root.sh" "$root" python3 "$here/$script" "$out" >"$out/log" 2>&1; then
    echo "recording with $script failed:"; cat "$out/log"; exit 1
  fi
done
rm -f "$out/log"
python3 "$here/run_golden.py" "$profsh" "$out"
