#!/usr/bin/env python3
"""Medians per variant, rank count and operation of coll_ab.sh's output,
and the ratios old/C, new/C, new/old (median of per-launch ratios)."""
import sys, statistics as st
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    v, n, op, t = line.split()
    rows[(v, int(n), op)].append(float(t))
print("| op | ranks | old µs | new µs | C µs | old / C | new / C | new / old |")
print("|---|---|---|---|---|---|---|---|")
for n in sorted({k[1] for k in rows}):
    for op in ("allreduce", "barrier", "bcast"):
        o, w, c = (rows[(v, n, op)] for v in ("old", "new", "c"))
        if not (o and w and c):
            continue
        r = lambda a, b: st.median(x / y for x, y in zip(a, b))
        print(f"| {op} | {n} | {st.median(o):.3f} | {st.median(w):.3f} | {st.median(c):.3f} "
              f"| {r(o, c):.2f} | {r(w, c):.2f} | {r(w, o):.2f} |")
