#!/bin/bash
# 0 and 8 B ping-pong at 2 ranks: the anchor's pingpong.c (sizes cut to 0
# and 8 B) through pertinax's libmpi.so.12 (built by MPICH's mpicc), the
# same method on the Rust API (pertinax-bench worker pingpong), and the C
# program on Open MPI 5.0.11; R interleaved rounds, one run. Summaries:
# ppsum.py OUT abi,ompi,rust and modes.py OUT.
# usage: R=61 abi_pingpong.sh > OUT
set -u
cd "$(dirname "$0")/../../.."
R=${R:-61}
A=../shared/anchors/ompi
sed 's/^static const int sizes\[\] = {.*};/static const int sizes[] = {0, 8};/' "$A/pingpong.c" > /tmp/p2p_lean_pp08.c
/tmp/mpich/bin/mpicc -O2 -I$A -o /tmp/p2p_lean_pp08_abi /tmp/p2p_lean_pp08.c
/tmp/ompi/bin/mpicc -O2 -I$A -o /tmp/p2p_lean_pp08_ompi /tmp/p2p_lean_pp08.c
cargo build --release -q -p pertinax-abi -p pertinax-cli -p pertinax-bench
P=target/release/pertinax
OMPIRUN="/tmp/ompi/bin/mpirun --oversubscribe --allow-run-as-root --with-ft ulfm"
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) cores $(nproc) pingpong 0,8 B, $R rounds"
for i in $(seq 1 "$R"); do
  $P run -n 2 -- /tmp/p2p_lean_pp08_abi -e fatal 2>/dev/null | grep "^PP" | sed "s/^/abi /"
  $P run -n 2 -- target/release/pertinax-bench worker pingpong --sizes 0,8 2>/dev/null | grep "^PP" | sed "s/^/rust /"
  $OMPIRUN -n 2 /tmp/p2p_lean_pp08_ompi -e fatal 2>/dev/null | grep "^PP" | sed "s/^/ompi /"
done
