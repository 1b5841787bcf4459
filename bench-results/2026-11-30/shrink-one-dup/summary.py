#!/usr/bin/env python3
"""Prints, for each ft output file given, the pertinax / C ratio of the
healthy shrink, shrink after a failure, revoke + shrink and the agrees, at
each size (the benchmark's comparison rows)."""
import re
import sys

ROWS = ["shrink healthy µs", "shrink med (after failure)", "revoke+shrink max",
        "agree healthy µs", "agree on shrunk comm µs"]
for path in sys.argv[1:]:
    n = None
    out = {}
    for line in open(path, encoding="utf-8"):
        m = re.match(r"ft, (\d+) ranks", line)
        if m:
            n = m.group(1)
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 4 and cells[1] in ROWS and not cells[1].endswith("ratio"):
            mode, ours, c, ratio = cells[2], cells[3].split()[0], cells[4].split()[0], cells[5]
            out.setdefault(n, []).append(f"{cells[1]:<28} {mode:<6} {ours:>9} / {c:>9} = {ratio}")
    print(path)
    for n, rows in out.items():
        for r in rows:
            print(f"  n={n:>2}  {r}")
