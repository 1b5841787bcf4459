#!/usr/bin/env bash
# Interleaved A/B/C of 0 and 8 B ping-pong on the MPI backend: the build
# before (OLD), this build (NEW) and C on the same Open MPI (the anchor
# pingpong), launch by launch, L launches each. Prints one line per launch
# and size: VARIANT BYTES half-round-trip-us (the PP line's median).
# C is the anchor pingpong.c with its sizes cut to 0 and 8 B (built here
# into /tmp/pp08: the anchor's 64 KiB and 1 MiB rounds take two minutes).
# usage: OLD=path NEW=path L=9 pingpong_ab.sh
set -euo pipefail
OMPI=${OMPI:-/tmp/ompi}
A=${ANCHORS:-/work/shared/anchors/ompi}
sed 's/^static const int sizes\[\] = {.*};/static const int sizes[] = {0, 8};/' "$A/pingpong.c" > /tmp/pp08.c
"$OMPI/bin/mpicc" -O2 -I"$A" -o /tmp/pp08 /tmp/pp08.c
C=/tmp/pp08
L=${L:-9}
M=("$OMPI/bin/mpirun" --allow-run-as-root --oversubscribe --with-ft ulfm
   --mca async_mpi_finalize 1 --mca coll ^han -n 2)
for i in $(seq 1 "$L"); do
  for v in old new c; do
    case $v in
      old) out=$(timeout 120 "${M[@]}" "$OLD" worker pingpong --sizes 0,8 --reps 20000 --batches 7 --warmup 2000) ;;
      new) out=$(timeout 120 "${M[@]}" "$NEW" worker pingpong --sizes 0,8 --reps 20000 --batches 7 --warmup 2000) ;;
      c)   out=$(timeout 120 "${M[@]}" "$C" -r 20000 -b 7 -w 2000) ;;
    esac
    echo "$out" | grep '^PP' | sed "s/^/$v /"
  done
done
