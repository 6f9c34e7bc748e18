#!/usr/bin/env python3
"""Summarises ab_bench.sh's output: best TFLOPS of each side per benchmark,
the change in percent, and the cells below a threshold.
    python3 benchmarks/ab_compare.py ab.txt [--worse 2]"""
import argparse
import collections
import re

parser = argparse.ArgumentParser()
parser.add_argument("files", nargs="+")
parser.add_argument("--worse", type=float, default=2.0, help="flag cells slower than this many percent")
args = parser.parse_args()
runs = collections.defaultdict(lambda: collections.defaultdict(list))
for path in args.files:
    for line in open(path):
        m = re.match(r"(old|new) (\S+?)/?\s.*TFLOPS=([\d.]+)", line)
        if m:
            runs[m.group(2)][m.group(1)].append(float(m.group(3)))
flagged = 0
for name, sides in runs.items():
    if "old" not in sides or "new" not in sides:
        continue
    old, new = max(sides["old"]), max(sides["new"])
    change = (new / old - 1) * 100
    flag = change < -args.worse
    flagged += flag
    print(f"{name:72s} {old:8.1f} {new:8.1f} {change:+6.1f}%{'  <--' if flag else ''}")
print(f"{len(runs)} cells, {flagged} more than {args.worse}% slower")
