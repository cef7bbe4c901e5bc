#!/usr/bin/env python3
"""Compares the frames of two flamegraph SVGs (profsh's and flamegraph.pl's): every frame's name,
sample count and level must match, as a multiset. Prints one line; exits 1 on a difference.

  compare_flamegraphs.py A.svg B.svg
"""
import collections
import html
import re
import sys

FRAME = re.compile(r"<title>(.*?) \(([\d,]+) [^,]*, [\d.]+%[^)]*\)</title><rect x=\"[\d.]+\" y=\"([\d.]+)\"")


def frames(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    found = FRAME.findall(text)
    # Levels from the y coordinate: the bottom frame (largest y) is level 0.
    ys = sorted({float(y) for _, _, y in found}, reverse=True)
    level = {y: i for i, y in enumerate(ys)}
    return collections.Counter((html.unescape(n), int(c.replace(",", "")), level[float(y)]) for n, c, y in found)


def main():
    a, b = frames(sys.argv[1]), frames(sys.argv[2])
    if a == b:
        print("same frames: %d frames, names, counts and levels identical" % sum(a.values()))
        return 0
    only_a, only_b = a - b, b - a
    print("DIFFERENT frames: %d only in %s, %d only in %s; e.g. %s / %s" %
          (sum(only_a.values()), sys.argv[1], sum(only_b.values()), sys.argv[2],
           list(only_a)[:3], list(only_b)[:3]))
    return 1


if __name__ == "__main__":
    sys.exit(main())
