#!/usr/bin/env bash
# pertinax's healthy shrink beside the raw MPI calls it is made of, in one
# launch (crates/pertinax/examples/mpi_shrink_ab.rs), L launches at each
# of 4 and 16 ranks, alternated.
# usage: L=3 run.sh [EXAMPLE]   (EXAMPLE: target/mpi/release/examples/mpi_shrink_ab)
set -u
L=${L:-3}
B=${1:-target/mpi/release/examples/mpi_shrink_ab}
for i in $(seq 1 "$L"); do
  for r in 4 16; do
    n=20; [ "$r" = 16 ] && n=5
    timeout 600 /tmp/ompi/bin/mpirun --allow-run-as-root --oversubscribe --with-ft ulfm \
      --mca async_mpi_finalize 1 --mca coll ^han -n "$r" "$B" "$n" 2>&1 | grep SHRINK
  done
done
