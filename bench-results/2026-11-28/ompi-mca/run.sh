#!/bin/bash
# One cell: N launches of one test on MPI with extra mpirun options.
# usage: OMPI=/tmp/ompi TGT=target/mpi run.sh "MPIRUN ARGS" FILE TEST [N]
#   (the test runs even when native-only.txt lists it: no --skip here).
#   The harness adds --mca async_mpi_finalize 1 --mca coll ^han since
#   commit bab241d; the README's "none" cells ran before it.
cd "$(dirname "$0")/../../.."
OMPI=${OMPI:-/tmp/ompi}
export PERTINAX_MPICC="$OMPI/bin/mpicc" PERTINAX_MPIRUN="$OMPI/bin/mpirun"
export CARGO_TARGET_DIR=${TGT:-target/mpi} RUSTFLAGS="-C link-arg=-Wl,-rpath,$OMPI/lib"
export PERTINAX_TEST_BACKEND=mpi PERTINAX_MPIRUN_ARGS="$1"
export PERTINAX_CAMPAIGN_RUNS=${PERTINAX_CAMPAIGN_RUNS:-4} PERTINAX_RESILIENT_HIER_RUNS=${PERTINAX_RESILIENT_HIER_RUNS:-4}
pass=0; fail=0
for i in $(seq 1 "${4:-1}"); do
    t0=$(date +%s)
    if timeout -k 10 1200 cargo test -q --release -p pertinax-tests --features mpi --test "$2" -- --exact "$3" >/tmp/mca-cell.log 2>&1; then
        pass=$((pass + 1)); r=pass
    else
        fail=$((fail + 1)); r=FAIL; cp /tmp/mca-cell.log "/tmp/mca-fail-$2-$3-$(date +%s).log"
    fi
    echo "[$1] $2::$3 launch $i: $r ($(($(date +%s) - t0)) s)"
done
echo "[$1] $2::$3: $pass pass, $fail fail"
