#!/bin/bash
# usage: ab.sh N dirA dirB [extra env for both]
N=$1; A=$2; B=$3
for i in $(seq 1 $N); do
  for d in $A $B; do
    out=$($d/target/release/pertinax run -n 2 -- $d/target/release/pertinax-bench worker pingpong --sizes 0,8 --reps 2000 --warmup 200 --batches 7 2>&1 | grep '^PP' | awk '{print $3}' | sed 's/t_half_us_med=//' | tr '\n' ' ')
    echo "$i $d $out"
  done
done
