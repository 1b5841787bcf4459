#!/usr/bin/env bash
# pertinax's agree against the raw blocking MPIX_Comm_agree, call against
# call in one launch (crates/pertinax/examples/mpi_agree_ab.rs), on the
# healthy world and, with `shrunk`, on the communicators a survivor gets
# after the last rank died (Comm::shrink against MPIX_Comm_revoke +
# MPIX_Comm_shrink of a raw duplicate). L launches of each, alternated.
# Build first (MPI env as in BENCHMARKS.md):
#   CARGO_TARGET_DIR=target/mpi cargo build --release -p pertinax --example mpi_agree_ab --features mpi
L=${L:-5}
exe=${EXE:-target/mpi/release/examples/mpi_agree_ab}
for i in $(seq 1 "$L"); do
  for n in 4 8; do
    for m in "" shrunk; do
      timeout 120 /tmp/ompi/bin/mpirun --allow-run-as-root --oversubscribe --with-ft ulfm --mca coll ^han \
        -n $n "$exe" 3000 $m 2>&1 | grep -E "AGREE|rror" | head -2
    done
  done
done
