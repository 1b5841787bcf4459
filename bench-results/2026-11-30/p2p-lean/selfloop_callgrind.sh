#!/bin/bash
# Instructions per iteration of the 1-rank self loop (one 8-byte send to
# itself, one receive, one 1-int allreduce) through the C ABI and through
# the Rust API: (I(100000) - I(50000)) / 50000 under callgrind. Uses
# ../../2026-11-29/abi-fast/selfloop.{c,rs} (the .rs is copied into
# crates/pertinax/examples/ for the build and removed after).
set -u
cd "$(dirname "$0")/../../.."
S=bench-results/2026-11-29/abi-fast
/tmp/mpich/bin/mpicc -O2 -g -o /tmp/p2p_lean_selfloop $S/selfloop.c
cp $S/selfloop.rs crates/pertinax/examples/selfloop.rs
cargo build --release -q -p pertinax-abi -p pertinax-cli && cargo build --release -q -p pertinax --example selfloop
rm crates/pertinax/examples/selfloop.rs
per() { # PROGRAM LABEL
  local a b
  for n in 50000 100000; do
    target/release/pertinax run -n 1 -- valgrind --tool=callgrind --callgrind-out-file=/tmp/p2p_lean_$2.$n "$1" $n >/dev/null 2>&1
  done
  a=$(callgrind_annotate /tmp/p2p_lean_$2.50000 2>/dev/null | grep "PROGRAM TOTALS" | awk '{gsub(",","",$1); print $1}')
  b=$(callgrind_annotate /tmp/p2p_lean_$2.100000 2>/dev/null | grep "PROGRAM TOTALS" | awk '{gsub(",","",$1); print $1}')
  echo "$2 per-iteration $(( (b - a) / 50000 ))"
}
per /tmp/p2p_lean_selfloop abi
per target/release/examples/selfloop rust
