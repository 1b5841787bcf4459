#!/bin/bash
# Instructions inside Open MPI's MPI_Recv per 8-byte round trip: pertinax
# on the MPI backend (`pertinax-bench worker pingpong`) against the C
# anchor's ping-pong cut to 8 B, both at 2 ranks under callgrind, rank 0's
# profile, PMPI_Recv's inclusive count / 140,100 round trips (20,000 reps
# x 7 batches + warmup). A callback registered with opal_progress (libnbc's,
# once a communicator that was the parent of an MPI_Comm_dup lives) shows
# here.
# usage: open_mpi_part.sh PERTINAX_BENCH_BUILT_WITH_MPI
set -u
B=$1; A=${ANCHORS:-/work/shared/anchors/ompi}; D=/tmp/ompi_part; rm -rf $D; mkdir -p $D/c $D/p
M=(/tmp/ompi/bin/mpirun --allow-run-as-root --oversubscribe --with-ft ulfm -n 2 valgrind --tool=callgrind)
sed 's/^static const int sizes\[\] = {.*};/static const int sizes[] = {8};/' "$A/pingpong.c" > $D/pp8.c
/tmp/ompi/bin/mpicc -O2 -I"$A" -o $D/pp8 $D/pp8.c
(cd $D/c && timeout 600 "${M[@]}" --callgrind-out-file=cg.%p ../pp8 -r 20000 -w 100 -b 7 >out.txt 2>&1)
(cd $D/p && timeout 600 "${M[@]}" --callgrind-out-file=cg.%p "$B" worker pingpong --sizes 8 --reps 20000 >out.txt 2>&1)
for s in c p; do
  f=$(ls $D/$s/cg.* | head -1)
  n=$(callgrind_annotate --inclusive=yes "$f" 2>/dev/null | grep -E "\?\?\?:PMPI_Recv \[" | head -1 | awk '{gsub(",","",$1); print $1}')
  nbc=$(callgrind_annotate "$f" 2>/dev/null | grep -E "libnbc_progress" | head -1 | awk '{gsub(",","",$1); print $1}')
  echo "$s PMPI_Recv per round trip: $((n / 140100)); ompi_coll_libnbc_progress: $(( ${nbc:-0} / 140100 ))"
done
