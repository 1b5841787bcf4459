#!/usr/bin/env bash
# Interleaved A/B/C of 8 B allreduce, barrier and bcast on the MPI backend:
# the build before (OLD), this build (NEW) and C on the same Open MPI
# (coll_sweep, the anchor), launch by launch, L launches each, at the
# rank counts RANKS. Prints one line per launch and operation:
#   VARIANT RANKS OP t_max_us_med
# usage: OLD=path NEW=path C=path L=9 RANKS="2 8" coll_ab.sh
set -euo pipefail
OMPI=${OMPI:-/tmp/ompi}
L=${L:-9}
RANKS=${RANKS:-"2 8"}
M=("$OMPI/bin/mpirun" --allow-run-as-root --oversubscribe --with-ft ulfm
   --mca async_mpi_finalize 1 --mca coll ^han)
for n in $RANKS; do
  for i in $(seq 1 "$L"); do
    for v in old new c; do
      case $v in
        old) out=$(timeout 120 "${M[@]}" -n "$n" "$OLD" worker coll --ops allreduce,barrier,bcast \
               --sizes 8 --max-reps 1000 --warmup 20 --batches 5 --target-ms 300) ;;
        new) out=$(timeout 120 "${M[@]}" -n "$n" "$NEW" worker coll --ops allreduce,barrier,bcast \
               --sizes 8 --max-reps 1000 --warmup 20 --batches 5 --target-ms 300) ;;
        c)   out=$(timeout 120 "${M[@]}" -n "$n" "$C" -o allreduce,barrier,bcast -s 8 -r 1000 \
               -w 20 -b 5 -t 0.300) ;;
      esac
      echo "$out" | grep '^COLL' | sed -E "s/^COLL op=([a-z]+) .*t_max_us_med=([0-9.]+).*/$v $n \1 \2/"
    done
  done
done
