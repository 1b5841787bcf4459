#!/bin/bash
# Instructions of pertinax's own code (its crates, the shim, the Rust
# standard library inlined into them; not Open MPI, not libc) per 8-byte
# send + receive on the MPI backend: `pertinax-bench worker pingpong` at 2
# ranks under callgrind, rank 0's profile, every function's exclusive
# count summed and divided by the sends. Unlike ../p2p-lean/mpi_callgrind.sh
# it does not depend on which functions are inlined into which.
# usage: outside_callgrind.sh PERTINAX_BENCH_BUILT_WITH_MPI LABEL
set -u
B=$1; L=$2; D=/tmp/p2p_inline_cg_$L; rm -rf "$D"; mkdir -p "$D"; cd "$D"
timeout 600 /tmp/ompi/bin/mpirun --allow-run-as-root --oversubscribe --with-ft ulfm -n 2 \
  valgrind --tool=callgrind --callgrind-out-file=cg.%p "$B" worker pingpong --sizes 8 --reps 20000 >out.txt 2>&1
f=$(ls cg.* | head -1)
calls=$(callgrind_annotate --tree=caller "$f" 2>/dev/null | grep -E "=> ...:PMPI_Send \(" | head -1 \
  | sed -E "s/.*\(([0-9,]+)x\).*/\1/" | tr -d ,)
own=$(callgrind_annotate --inclusive=no --auto=no --threshold=100 "$f" 2>/dev/null | awk '
  /^ *[0-9,]+ \(/ { x = $1; gsub(",", "", x)
    if ($0 ~ /PROGRAM TOTALS/) next
    if ($0 ~ /\/crates\/|\/rustc\// && $0 !~ /\.so[.0-9]*\]$/) s += x }
  END { print s }')
echo "$L sends=$calls own_per_send_and_receive=$(( own / calls ))"
