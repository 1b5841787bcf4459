#!/usr/bin/env python3
"""abi_pingpong.sh's log: the ABI / Rust API ratio per round, over all rounds and over the rounds where both launches ran in the fast state (under THRESHOLD us, default 0.2) or both in the slow one. This VM moves between the two from launch to launch (2 vCPUs, the ranks 0.1 or 0.33 us apart)."""
import sys, re, statistics as st
# rounds: consecutive abi, rust, ompi lines per size
rounds = []; cur = {}
for line in open(sys.argv[1]):
    m = re.match(r'(\w+) PP size=(\d+) t_half_us_med=([\d.]+)', line)
    if not m: continue
    v, s, t = m.group(1), int(m.group(2)), float(m.group(3))
    if v == 'abi' and s == 0 and cur: rounds.append(cur); cur = {}
    cur[(v, s)] = t
if cur: rounds.append(cur)
thr = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
for s in (0, 8):
    both_fast = [r[('abi',s)]/r[('rust',s)] for r in rounds if r[('abi',s)] < thr and r[('rust',s)] < thr]
    both_slow = [r[('abi',s)]/r[('rust',s)] for r in rounds if r[('abi',s)] >= thr and r[('rust',s)] >= thr]
    allr = [r[('abi',s)]/r[('rust',s)] for r in rounds]
    print(f"size={s} all: {st.median(allr):.3f} ({len(allr)}) | both fast: {st.median(both_fast) if both_fast else float('nan'):.3f} ({len(both_fast)}) | both slow: {st.median(both_slow) if both_slow else float('nan'):.3f} ({len(both_slow)})")
