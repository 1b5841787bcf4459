#!/bin/sh
# Run M6 (issue 17): pertinax over Open MPI beside the C anchors, interleaved
# launch by launch. From the repository root, after the two builds of
# BENCHMARKS.md's "MPI backend overhead" section.
set -x
out=bench-results/2026-11-27/issue17-m6
B=target/release/pertinax-bench
A=/work/shared/anchors/ompi
MPIRUN="/tmp/ompi/bin/mpirun --oversubscribe --allow-run-as-root --with-ft ulfm"
$B pingpong --backend mpi --json --sizes 0,8,1M --launches 15 --timeout 200 --anchors $A >$out/pingpong.json 2>$out/pingpong.txt
$B coll --backend mpi --json --ranks 8 --ops allreduce --sizes 8 --launches 11 --anchors $A >$out/coll8.json 2>$out/coll8.txt
# C alone: its blocking and its non-blocking allreduce, alternated in one launch
/tmp/ompi/bin/mpicc -O2 -o target/allreduce_forms crates/pertinax-bench/c/allreduce_forms.c
for i in 1 2 3 4 5; do $MPIRUN -n 8 target/allreduce_forms 2000 15; done >$out/allreduce_forms.txt 2>&1
$B ft --backend mpi --json --launches 9 --ranks 4,16 --modes recv,agree --parts compare --anchors $A >$out/ft.json 2>$out/ft.txt
