#!/bin/bash
# Interleaved launches: Open MPI 5.0.11 (ULFM) and pertinax's libmpi.so.12, the same pingpong.c
cd /work/main
for i in 1 2 3 4 5 6 7; do
  /tmp/ompi/bin/mpirun --oversubscribe --allow-run-as-root --with-ft ulfm -n 2 /tmp/pp_ompi -e fatal 2>/dev/null | grep "^PP" | sed "s/^/ompi $i /"
  LD_LIBRARY_PATH=$PWD/target/release target/release/pertinax run -n 2 -- /tmp/pp_abi -e fatal 2>/dev/null | grep "^PP" | sed "s/^/abi $i /"
done
