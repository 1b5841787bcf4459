#!/usr/bin/env bash
# old/new mpi_agree_ab alternated, one launch each: pertinax agree / the raw
# blocking MPIX_Comm_agree (the example as of this directory, built against
# the old and the new library as /tmp/agree_old and /tmp/agree_new)
L=${1:-5}
for r in 4 16; do
  n=3000; [ $r = 16 ] && n=300
  for i in $(seq 1 $L); do
    for v in old new; do
      out=$(timeout 300 /tmp/ompi/bin/mpirun --allow-run-as-root --oversubscribe --with-ft ulfm --mca async_mpi_finalize 1 --mca coll ^han -n $r /tmp/agree_$v $n 2>&1 | grep AGREE)
      echo "$v $out"
    done
  done
done
