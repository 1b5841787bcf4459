#!/bin/bash
# Instructions of pertinax's own (every function outside Open MPI, libc
# and the loader) per 8-byte round trip on the MPI backend:
# `pertinax-bench worker pingpong` at 2 ranks under callgrind
# (--dump-instr=yes), rank 0's profile, each function's exclusive count
# divided by the round trips (140,100: 20,000 reps x 7 batches + warmup).
# The C anchor's own loop (`main`) is about 27 per round trip.
# usage: own_callgrind.sh PERTINAX_BENCH_BUILT_WITH_MPI LABEL
set -u
B=$1; L=$2; D=/tmp/own_cg_$L; rm -rf "$D"; mkdir -p "$D"; cd "$D"
timeout 600 /tmp/ompi/bin/mpirun --allow-run-as-root --oversubscribe --with-ft ulfm -n 2 \
  valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg.%p "$B" \
  worker pingpong --sizes 8 --reps 20000 >out.txt 2>&1
f=$(ls cg.* | head -1)
python3 - "$f" 140100 <<'PY'
import sys, re, collections
f, n = sys.argv[1], float(sys.argv[2])
cost = collections.Counter(); names = {}; fn = None; last = [0, 0]; skip = False
def pos(tok, i):
    if tok == '*': return last[i]
    if tok[0] in '+-': return last[i] + int(tok)
    return int(tok, 16) if tok.startswith('0x') else int(tok)
for line in open(f):
    if line[0].isdigit() or line[0] in '+-*':
        p = line.split()
        last = [pos(p[0], 0), pos(p[1], 1)]
        if skip: skip = False; continue    # a call line's inclusive cost
        if fn is not None and len(p) > 2: cost[fn] += int(p[2])
        continue
    m = re.match(r'^(c?)fn=\((\d+)\)(?: (.*))?$', line.rstrip('\n'))
    if m:
        if m.group(3): names[m.group(2)] = m.group(3)
        if not m.group(1): fn = names[m.group(2)]
        continue
    if line.startswith('calls='): skip = True
own = [(c / n, f) for f, c in cost.items()
       if ('pertinax' in f or f.startswith('pxm_')) and c / n >= 1]
for c, f in sorted(own, reverse=True): print(f"{c:7.1f}  {f[:120]}")
print(f"{sum(c for c, _ in own):7.1f}  own, per round trip")
PY
