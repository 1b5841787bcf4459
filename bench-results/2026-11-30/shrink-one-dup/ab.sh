#!/usr/bin/env bash
# Alternates the benchmark's ULFM comparison (pertinax against C on the
# same Open MPI, in one run) between the build before (OLD: an MPI build of
# pertinax-bench) and after (NEW), R rounds, one output file per run.
# usage: OLD=path NEW=path [R=2] ab.sh OUTDIR
set -euo pipefail
out=$1; R=${R:-2}
for i in $(seq 1 "$R"); do
  for which in old new; do
    exe=$OLD; [ $which = new ] && exe=$NEW
    target/release/pertinax-bench ft --backend mpi --mpi-exe "$exe" --ranks 4,16 \
      --modes recv,agree --parts compare --launches 9 --anchors /work/shared/anchors/ompi \
      > "$out/ft-$which-ab$i.txt" 2>&1
  done
done
