#!/bin/bash
# Issue 32's collective cells again, with batches long enough to measure:
# the same C program (pertinax-bench's c/coll_sweep.c) through pertinax's
# libmpi.so.12 (built by MPICH's mpicc) and on Open MPI 5.0.11 (its
# mpicc), and the same method on pertinax's Rust API (`pertinax-bench
# worker coll`); each batch about TARGET seconds (up to 200,000 calls)
# instead of 0.3 s capped at 1,000 calls (a barrier at 8 ranks on 2
# cores is 20 µs: 20 ms batches). Launches interleaved abi, rust, ompi,
# L rounds, one run.
# usage: L=5 RANKS="4 8" TARGET=0.5 run.sh > raw.txt; then
#        ../../2026-11-28/issue32-coll/summarize.py raw.txt
set -u
cd "$(dirname "$0")/../../.."
L=${L:-5}; RANKS=${RANKS:-"4 8"}; TARGET=${TARGET:-0.5}
A=../shared/anchors/ompi
B=crates/pertinax-bench/c
mkdir -p /tmp/fakeext && : > /tmp/fakeext/mpi-ext.h   # MPICH has no mpi-ext.h
cargo build --release -q -p pertinax-abi -p pertinax-cli -p pertinax-bench
/tmp/mpich/bin/mpicc -O2 -I/tmp/fakeext -I$A -o /tmp/acl_coll_abi $B/coll_sweep.c
/tmp/ompi/bin/mpicc -O2 -I$A -o /tmp/acl_coll_ompi $B/coll_sweep.c
P=target/release/pertinax
OMPIRUN="/tmp/ompi/bin/mpirun --oversubscribe --allow-run-as-root --with-ft ulfm"
MS=$(python3 -c "print(int($TARGET*1000))")
CO="-o barrier,bcast,allreduce -s 8 -r 200000 -b 7 -t $TARGET"
RO="--ops barrier,bcast,allreduce --sizes 8 --max-reps 200000 --batches 7 --target-ms $MS"
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) cores $(nproc) L=$L ranks $RANKS target $TARGET s"
for i in $(seq 1 "$L"); do
  for n in $RANKS; do
    $P run -n "$n" -- /tmp/acl_coll_abi $CO 2>/dev/null | grep "^COLL" | sed "s/^/abi  $i n=$n /"
    $P run -n "$n" -- target/release/pertinax-bench worker coll $RO 2>/dev/null | grep "^COLL" | sed "s/^/rust $i n=$n /"
    $OMPIRUN -n "$n" /tmp/acl_coll_ompi $CO 2>/dev/null | grep "^COLL" | sed "s/^/ompi $i n=$n /"
  done
done
