#!/bin/bash
# Issue 32's goal, measured: the same C programs (the anchors' pingpong.c,
# pertinax-bench's c/coll_sweep.c) through pertinax's libmpi.so.12 (built by
# MPICH's mpicc) and on Open MPI 5.0.11 (built by its mpicc), and the same
# method on pertinax's Rust API (pertinax-bench worker pingpong/coll);
# launches interleaved abi, rust, ompi, L rounds, one run.
# usage: L=5 RANKS="2 4 8" bench-results/2026-11-28/issue32-coll/run.sh > raw.txt
set -u
cd "$(dirname "$0")/../../.."
L=${L:-5}; RANKS=${RANKS:-"2 4 8"}
A=../shared/anchors/ompi
B=crates/pertinax-bench/c
cargo build --release -q -p pertinax-abi -p pertinax-cli -p pertinax-bench
/tmp/mpich/bin/mpicc -O2 -I/tmp/fakeext -I$A -o /tmp/b32_pp_abi $A/pingpong.c
/tmp/ompi/bin/mpicc -O2 -I$A -o /tmp/b32_pp_ompi $A/pingpong.c
/tmp/mpich/bin/mpicc -O2 -I/tmp/fakeext -I$A -o /tmp/b32_coll_abi $B/coll_sweep.c
/tmp/ompi/bin/mpicc -O2 -I$A -o /tmp/b32_coll_ompi $B/coll_sweep.c
P=target/release/pertinax
OMPIRUN="/tmp/ompi/bin/mpirun --oversubscribe --allow-run-as-root --with-ft ulfm"
CO="-o barrier,bcast,allreduce -s 8"
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) cores $(nproc) L=$L ranks $RANKS"
for i in $(seq 1 $L); do
  $P run -n 2 -- /tmp/b32_pp_abi -e fatal 2>/dev/null | grep "^PP" | sed "s/^/abi  $i n=2 /"
  $P run -n 2 -- target/release/pertinax-bench worker pingpong --sizes 0,8 2>/dev/null | grep "^PP" | sed "s/^/rust $i n=2 /"
  $OMPIRUN -n 2 /tmp/b32_pp_ompi -e fatal 2>/dev/null | grep "^PP" | sed "s/^/ompi $i n=2 /"
  for n in $RANKS; do
    $P run -n $n -- /tmp/b32_coll_abi $CO 2>/dev/null | grep "^COLL" | sed "s/^/abi  $i n=$n /"
    $P run -n $n -- target/release/pertinax-bench worker coll --ops barrier,bcast,allreduce --sizes 8 2>/dev/null | grep "^COLL" | sed "s/^/rust $i n=$n /"
    $OMPIRUN -n $n /tmp/b32_coll_ompi $CO 2>/dev/null | grep "^COLL" | sed "s/^/ompi $i n=$n /"
  done
done
