#!/bin/bash
N=$1
C2C=/work/main/target/ompi-anchors/c2c
M=/work/main/target/release
for i in $(seq 1 $N); do
  for v in none core ompi; do
    s=$($C2C 2>&1 | tail -1 | sed 's/.*oneway_ns=\([0-9.]*\).*/\1/')
    if [ "$v" = ompi ]; then
      out=$(/tmp/ompi/bin/mpirun --oversubscribe --allow-run-as-root --with-ft ulfm -n 2 /work/main/target/ompi-anchors/pingpong -e return -r 1000 -w 100 -b 7 2>/dev/null | awk '$0 ~ /size=0 |size=8 /' | sed 's/.*t_half_us_med=\([0-9.]*\).*/\1/' | tr '\n' ' ')
    else
      out=$($M/pertinax run --bind-to $v -n 2 -- $M/pertinax-bench worker pingpong --sizes 0,8 --reps 1000 --warmup 100 --batches 7 2>&1 | grep '^PP' | sed 's/.*t_half_us_med=\([0-9.]*\).*/\1/' | tr '\n' ' ')
    fi
    s2=$($C2C 2>&1 | tail -1 | sed 's/.*oneway_ns=\([0-9.]*\).*/\1/')
    echo "$i $v c2c=$s>$s2 $out"
  done
done
