#!/bin/bash
# The MPI ULFM and replace campaigns at full count (the direct point-to-point change), one after the other,
# on the commit checked out (nothing else running but niced builds).
# Needs Open MPI 5.0.11 in /tmp/ompi (docs/cluster.md).
# usage: campaigns.sh [ulfm] [replace]   (default: both); logs beside this file
set -u
cd "$(dirname "$0")/../../.."
D=bench-results/2026-12-02/p2p-direct
export PERTINAX_MPICC=/tmp/ompi/bin/mpicc PERTINAX_MPIRUN=/tmp/ompi/bin/mpirun \
  CARGO_TARGET_DIR=${TARGET:-target/mpi} RUSTFLAGS="-C link-arg=-Wl,-rpath,/tmp/ompi/lib" \
  PERTINAX_TEST_BACKEND=mpi PERTINAX_TEST_STACKS=1
T="cargo test --release -p pertinax-tests --features mpi --test ulfm"
for c in ${@:-ulfm replace}; do
  echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) $c" > $D/$c.log
  case $c in
    ulfm) PERTINAX_CAMPAIGN_RUNS=1000 $T -- randomized_campaign --exact --nocapture >> $D/$c.log 2>&1 ;;
    replace) PERTINAX_REPLACE_RUNS=${REPLACE_RUNS:-1000} $T -- randomized_replace_campaign --exact --nocapture >> $D/$c.log 2>&1 ;;
  esac
  echo "# $(date -u +%FT%TZ) rc=$?" >> $D/$c.log
done
