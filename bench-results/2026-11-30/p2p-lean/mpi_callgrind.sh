#!/bin/bash
# Instructions outside Open MPI per blocking 8-byte send and per receive
# on the MPI backend: `pertinax-bench worker pingpong` at 2 ranks under
# callgrind, rank 0's profile; (inclusive(send_bytes) - inclusive(PMPI_Send))
# / calls, and the same for the receive.
# usage: mpi_callgrind.sh PERTINAX_BENCH_BUILT_WITH_MPI LABEL
set -u
B=$1; L=$2; D=/tmp/p2p_lean_cg_$L; rm -rf "$D"; mkdir -p "$D"; cd "$D"
timeout 600 /tmp/ompi/bin/mpirun --allow-run-as-root --oversubscribe --with-ft ulfm -n 2 \
  valgrind --tool=callgrind --callgrind-out-file=cg.%p "$B" worker pingpong --sizes 8 --reps 20000 >out.txt 2>&1
f=$(ls cg.* | head -1)
callgrind_annotate --inclusive=yes "$f" 2>/dev/null > ann.txt
get() { grep -E "$1" ann.txt | head -1 | awk '{gsub(",","",$1); print $1}'; }
ps=$(get "\?\?\?:PMPI_Send \["); pr=$(get "\?\?\?:PMPI_Recv \[")
sb=$(get "plain.rs:.*send_bytes \["); rb=$(get "plain.rs:.*recv_bytes \[")
calls=$(callgrind_annotate --tree=caller "$f" 2>/dev/null | grep -E "=> ...:PMPI_Send \(" | head -1 \
  | sed -E "s/.*\(([0-9,]+)x\).*/\1/" | tr -d ,)
echo "$L sends=$calls send_outside=$(( (sb-ps)/calls )) recv_outside=$(( (rb-pr)/calls ))"
