#!/bin/sh
# Records the golden cases again with the installed PyTorch and checks profsh against them, so
# that agreement does not depend on the committed recordings alone. Exit 77 (skip) without torch.
profsh=$1
here=$2
if ! /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  echo "torch is not installed; skipping the live golden test"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for script in record_torch.py record_torch_events.py; do
  /usr/bin/python3 "$here/$script" "$out" >/dev/null 2>&1 || { echo "recording with $script failed"; /usr/bin/python3 "$here/$script" "$out"; exit 1; }
done
python3 "$here/run_golden.py" "$profsh" "$out"
