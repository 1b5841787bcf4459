#!/bin/bash
# The MPI message-logging and offload campaigns at full count, one after
# the other (nothing else running but niced builds), on the commit
# checked out. Needs Open MPI 5.0.11 in /tmp/ompi (see docs/cluster.md).
# usage: run.sh [msglog] [offload]   (default: both); logs beside this file
set -u
cd "$(dirname "$0")/../../.."
D=bench-results/2026-12-02/campaigns-mpi-msglog-offload
export PERTINAX_MPICC=/tmp/ompi/bin/mpicc PERTINAX_MPIRUN=/tmp/ompi/bin/mpirun \
  CARGO_TARGET_DIR=target/mpi RUSTFLAGS="-C link-arg=-Wl,-rpath,/tmp/ompi/lib" \
  PERTINAX_TEST_BACKEND=mpi PERTINAX_TEST_STACKS=1
T="cargo test --release -p pertinax-tests --features mpi"
for c in ${@:-msglog offload}; do
  echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) $c" > $D/$c.log
  case $c in
    msglog) PERTINAX_MSGLOG_CAMPAIGN_RUNS=1000 $T --test msglog randomized -- --nocapture >> $D/$c.log 2>&1 ;;
    offload) PERTINAX_OFFLOAD_CAMPAIGN=1000 $T --test offload randomized_campaign -- --nocapture >> $D/$c.log 2>&1 ;;
  esac
  echo "# $(date -u +%FT%TZ) rc=$?" >> $D/$c.log
done
