#!/bin/bash
# Issue 33's goal, measured: an unchanged C program's 8-byte MPI_Allreduce
# (pertinax-bench's c/coll_sweep.c, built by MPICH's mpicc) through
# pertinax's libmpi.so.12, plain against `pertinax run --resilient` (the
# default agree check), launches interleaved, L rounds, one run.
# usage: L=9 N=8 bench-results/2026-11-28/issue33-resilient-overhead/run.sh > raw.txt
set -u
cd "$(dirname "$0")/../../.."
L=${L:-9}; N=${N:-8}
cargo build --release -q -p pertinax-abi -p pertinax-cli
/tmp/mpich/bin/mpicc -O2 -I/tmp/fakeext -I../shared/anchors/ompi -o /tmp/b33_coll crates/pertinax-bench/c/coll_sweep.c
P=target/release/pertinax
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) cores $(nproc) ranks $N L=$L"
for i in $(seq 1 "$L"); do
  $P run -n "$N" -- /tmp/b33_coll -o allreduce -s 8 2>/dev/null | grep "^COLL" | sed "s/^/plain $i /"
  $P run -n "$N" --resilient -- /tmp/b33_coll -o allreduce -s 8 2>/dev/null | grep "^COLL" | sed "s/^/resilient $i /"
done
