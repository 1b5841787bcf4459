#!/bin/bash
# usage: ab2.sh N dir... : per round, for each dir: c2c sentinel, pingpong 0,8
N=$1; shift
C2C=/work/main/target/ompi-anchors/c2c
for i in $(seq 1 $N); do
  for d in "$@"; do
    s=$($C2C 2>&1 | tail -1 | sed 's/.*oneway_ns=\([0-9.]*\).*/\1/')
    if [ "$d" = ompi ]; then
      out=$(/tmp/ompi/bin/mpirun --oversubscribe --allow-run-as-root --with-ft ulfm -n 2 /work/main/target/ompi-anchors/pingpong -e return -r 2000 -w 200 -b 7 2>/dev/null | awk '$0 ~ /size=0 |size=8 /' | sed 's/.*t_half_us_med=\([0-9.]*\).*/\1/' | tr '\n' ' ')
    else
      out=$($d/target/release/pertinax run -n 2 -- $d/target/release/pertinax-bench worker pingpong --sizes 0,8 --reps 2000 --warmup 200 --batches 7 2>&1 | grep '^PP' | sed 's/.*t_half_us_med=\([0-9.]*\).*/\1/' | tr '\n' ' ')
    fi
    s2=$($C2C 2>&1 | tail -1 | sed 's/.*oneway_ns=\([0-9.]*\).*/\1/')
    echo "$i $(basename $(dirname $d/x)) c2c=$s>$s2 $out"
  done
done
