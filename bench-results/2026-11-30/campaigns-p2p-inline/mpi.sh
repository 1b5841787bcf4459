#!/bin/bash
# The MPI campaigns, one at a time, from the repository root; with
# arguments only those named (ulfm propagate resilient msglog offload replace).

cd "$(dirname "$0")/../../.."
export PERTINAX_MPICC=/tmp/ompi/bin/mpicc PERTINAX_MPIRUN=/tmp/ompi/bin/mpirun CARGO_TARGET_DIR=target/mpi RUSTFLAGS="-C link-arg=-Wl,-rpath,/tmp/ompi/lib"
export PERTINAX_TEST_BACKEND=mpi PERTINAX_TEST_STACKS=1
echo "# head $(git rev-parse --short HEAD)"
WANT="$*"
run() {
  want_name=$1
  if [ -n "$WANT" ] && [[ " $WANT " != *" $want_name "* ]]; then return; fi
  echo "# $1 $(date -u +%T)"; shift
  # The whole output is kept (a hang's stacks), the summary printed.
  env "$@" > "/tmp/campaign-$want_name.log" 2>&1
  grep -E "campaign|test result|FAILED|panicked" "/tmp/campaign-$want_name.log" | grep -v "has been running\|campaign run [0-9]"
}
run ulfm PERTINAX_CAMPAIGN_RUNS=300 timeout 2400 cargo test --release -p pertinax-tests --features mpi --test ulfm -- randomized_campaign --exact --nocapture
run propagate PERTINAX_PROP_CAMPAIGN_RUNS=300 timeout 2400 cargo test --release -p pertinax-tests --features mpi --test propagate -- randomized_campaign --nocapture
run resilient PERTINAX_RESILIENT_CAMPAIGN_RUNS=25 timeout 2400 cargo test --release -p pertinax-tests --features mpi --test resilient -- randomized_campaign_has_no_hang_and_no_wrong_answer --nocapture
run msglog PERTINAX_MSGLOG_CAMPAIGN_RUNS=60 timeout 1500 cargo test --release -p pertinax-tests --features mpi --test msglog -- randomized_campaign_has_no_hang_and_no_wrong_answer --exact --nocapture
run offload PERTINAX_OFFLOAD_CAMPAIGN=100 timeout 2400 cargo test --release -p pertinax-tests --features mpi --test offload -- randomized_campaign --nocapture
run replace PERTINAX_REPLACE_RUNS=200 timeout 2400 cargo test --release -p pertinax-tests --features mpi --test ulfm -- randomized_replace_campaign --nocapture
echo "# done $(date -u +%T)"
