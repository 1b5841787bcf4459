#!/bin/bash
# 0 and 8 B ping-pong at 2 ranks through pertinax's libmpi.so.12, the build
# before this change (OLD: a target directory holding its `pertinax` and
# libmpi.so) and this one, beside the same method on the Rust API
# (pertinax-bench worker pingpong); R interleaved rounds, one run. The C
# program is the anchor's pingpong.c cut to 0 and 8 B, built once by
# MPICH's mpicc: the same binary on both libraries.
# usage: OLD=target/old-abi/release R=41 pingpong_ab.sh > OUT
#        then ../../2026-11-30/p2p-lean/ppsum.py OUT old,new,rust
set -u
cd "$(dirname "$0")/../../.."
R=${R:-41}
OLD=${OLD:-target/old-abi/release}
A=../shared/anchors/ompi
sed 's/^static const int sizes\[\] = {.*};/static const int sizes[] = {0, 8};/' "$A/pingpong.c" > /tmp/abi_entry_pp08.c
/tmp/mpich/bin/mpicc -O2 -I$A -o /tmp/abi_entry_pp08 /tmp/abi_entry_pp08.c
cargo build --release -q -p pertinax-abi -p pertinax-cli -p pertinax-bench
P=target/release/pertinax
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) old $OLD cores $(nproc) pingpong 0,8 B, $R rounds"
for i in $(seq 1 "$R"); do
  $OLD/pertinax run -n 2 -- /tmp/abi_entry_pp08 -e fatal 2>/dev/null | grep "^PP" | sed "s/^/old /"
  $P run -n 2 -- /tmp/abi_entry_pp08 -e fatal 2>/dev/null | grep "^PP" | sed "s/^/new /"
  $P run -n 2 -- target/release/pertinax-bench worker pingpong --sizes 0,8 2>/dev/null | grep "^PP" | sed "s/^/rust /"
done
