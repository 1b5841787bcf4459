#!/bin/bash
# The checkpoint library's seeded campaign at full count (1,000 jobs),
# native then MPI (Open MPI 5.0.11 in /tmp/ompi, see docs/cluster.md), on
# the commit checked out. TARGET: the MPI build's target directory (not
# one a running campaign uses). Logs beside this file.
# usage: TARGET=target/mpi2 run.sh [native] [mpi]   (default: both)
set -u
cd "$(dirname "$0")/../../.."
D=bench-results/2026-12-02/campaign-checkpoint
T="cargo test --release -p pertinax-tests"
for b in ${@:-native mpi}; do
  echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) $b" > $D/$b.log
  case $b in
    native) PERTINAX_CHECKPOINT_RUNS=1000 $T --test checkpoint randomized_campaign -- --nocapture >> $D/$b.log 2>&1 ;;
    mpi) PERTINAX_MPICC=/tmp/ompi/bin/mpicc PERTINAX_MPIRUN=/tmp/ompi/bin/mpirun \
      CARGO_TARGET_DIR=${TARGET:-target/mpi} RUSTFLAGS="-C link-arg=-Wl,-rpath,/tmp/ompi/lib" \
      PERTINAX_TEST_BACKEND=mpi PERTINAX_TEST_STACKS=1 PERTINAX_CHECKPOINT_RUNS=1000 \
      $T --features mpi --test checkpoint randomized_campaign -- --nocapture >> $D/$b.log 2>&1 ;;
  esac
  echo "# $(date -u +%FT%TZ) rc=$?" >> $D/$b.log
done
