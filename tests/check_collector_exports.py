#!/usr/bin/env python3
"""The preloaded libraries export only their own entry points and the functions they wrap: a
C++ runtime symbol they exported (libstdc++ is linked in statically) would take the place of the
program's own (LD_PRELOAD comes first), so the program's exceptions and thread exits would run
through profsh's copy of the runtime: a torch autograd thread ending in pthread_exit at Python
3.13's shutdown was aborted that way.

Usage: check_collector_exports.py LIBRARY...
"""
import re
import subprocess
import sys

RUNTIME = re.compile(r"__gxx_personality|__cxa_|_Unwind_|^_ZSt|^_ZNSt|^_ZNKSt|^_ZN9__gnu_cxx|^_ZN10__cxxabiv|^_ZTI|^_ZTS|^_ZTV")


def main():
    failed = 0
    for lib in sys.argv[1:]:
        out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
        names = [line.split()[-1] for line in out.splitlines() if line.strip()]
        leaked = [n for n in names if RUNTIME.search(n)]
        print(("ok   " if not leaked else "FAIL ") + "%s exports no C++ runtime symbol (%d exported; leaked: %s)"
              % (lib, len(names), leaked[:5]))
        failed += bool(leaked)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
