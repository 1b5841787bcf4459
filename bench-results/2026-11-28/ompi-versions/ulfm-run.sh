#!/bin/bash
# usage: OMPI=... TGT=... FIRST=44 N=4 /tmp/u44.sh
cd "$(dirname "$0")/../../.."
export PERTINAX_MPICC="$OMPI/bin/mpicc" PERTINAX_MPIRUN="$OMPI/bin/mpirun" CARGO_TARGET_DIR=$TGT RUSTFLAGS="-C link-arg=-Wl,-rpath,$OMPI/lib"
for i in $(seq 1 $N); do
PERTINAX_CAMPAIGN_FIRST=$FIRST PERTINAX_CAMPAIGN_RUNS=${RUNS:-1} PERTINAX_TEST_BACKEND=mpi timeout -k 10 900 cargo test --release -p pertinax-tests --features mpi --test ulfm -- --exact randomized_campaign 2>&1 | grep -E "^test |SIGSEGV|signal 11|exit 139|panicked|139" | head -5
done
