#!/bin/bash
# Interleaved: old (b903f75, separate agreement) then new (75f34b5, folded), N rounds.
N=${1:-5}
for i in $(seq 1 $N); do
  for v in old new; do
    /tmp/wt-$v/target/release/pertinax-bench resilient --no-ompi --launches 1 --parts overhead --ranks 8 --json > /tmp/fold-$v-$i.json 2>/tmp/fold-$v-$i.err
  done
done
