#!/bin/bash
# The ping-pong of issue32-coll/run.sh alone, R interleaved rounds (ABI,
# Rust API, Open MPI 5.0.11); run issue32-coll/run.sh once first (it builds
# and compiles /tmp/b32_pp_abi and /tmp/b32_pp_ompi).
# usage: R=15 bench-results/2026-11-29/abi-fast/pingpong.sh > raw-pingpong.txt
set -u
cd "$(dirname "$0")/../../.."
R=${R:-15}
P=target/release/pertinax
OMPIRUN="/tmp/ompi/bin/mpirun --oversubscribe --allow-run-as-root --with-ft ulfm"
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) cores $(nproc) pingpong only, $R rounds"
for i in $(seq 1 "$R"); do
  $P run -n 2 -- /tmp/b32_pp_abi -e fatal 2>/dev/null | grep "^PP" | sed "s/^/abi  $i n=2 /"
  $P run -n 2 -- target/release/pertinax-bench worker pingpong --sizes 0,8 2>/dev/null | grep "^PP" | sed "s/^/rust $i n=2 /"
  $OMPIRUN -n 2 /tmp/b32_pp_ompi -e fatal 2>/dev/null | grep "^PP" | sed "s/^/ompi $i n=2 /"
done
