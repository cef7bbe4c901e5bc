"""Two Python processes that import torch at the same moment, as ranks of a job do: each waits
at a barrier (a file the parent removes), imports torch, runs a few operators and says how many
it ran. The parent exits with the first failing child's status."""
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import os, sys, time
while os.path.exists(sys.argv[1]):
    time.sleep(0.001)
import torch
x = torch.ones(64, 64)
for _ in range(5):
    x = torch.mm(x, x) / 64
print("rank %s: mm done" % sys.argv[2], flush=True)
"""


def main():
    fd, barrier = tempfile.mkstemp(prefix="profsh_barrier_")
    os.close(fd)
    children = [subprocess.Popen([sys.executable, "-c", CHILD, barrier, str(rank)]) for rank in range(2)]
    time.sleep(0.5)  # both are waiting at the barrier: start them together
    os.unlink(barrier)
    codes = [c.wait() for c in children]
    sys.exit(next((c for c in codes if c), 0))


if __name__ == "__main__":
    main()
