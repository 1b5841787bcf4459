#!/usr/bin/env python3
"""Medians per variant and size of a ping-pong log (lines VARIANT PP size=N t_half_us_med=T), and the median of the per-launch ratios to the last variant named."""
import sys, re, statistics as st
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r'(\w+) PP size=(\d+) t_half_us_med=([\d.]+)', line)
    if m: rows[(m.group(1), int(m.group(2)))].append(float(m.group(3)))
vs = sys.argv[2].split(',') if len(sys.argv) > 2 else ['old','new','c']
base = vs[-1]
for size in sorted({k[1] for k in rows}):
    cols = {v: rows[(v,size)] for v in vs}
    r = lambda a, b: st.median(x / y for x, y in zip(a, b))
    line = f"size={size} " + " ".join(f"{v}={st.median(cols[v]):.3f}" for v in vs)
    line += " | " + " ".join(f"{v}/{base}={r(cols[v], cols[base]):.3f}" for v in vs[:-1])
    if 'old' in vs and 'new' in vs: line += f" new/old={r(cols['new'], cols['old']):.3f}"
    line += " | launches " + str(len(cols[base]))
    print(line)
