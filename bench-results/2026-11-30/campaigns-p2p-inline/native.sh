#!/bin/bash
# The native campaigns at full count, one at a time, from the repository root.
cd "$(dirname "$0")/../../.."
echo "# head $(git rev-parse --short HEAD)"
run() {
  echo "# $1 $(date -u +%T)"; shift
  env "$@" 2>&1 | grep -E "campaign|test result|FAILED|panicked" | grep -v "has been running\|campaign run [0-9]"
}
run ulfm PERTINAX_CAMPAIGN_RUNS=1000 timeout 1200 cargo test --release -p pertinax-tests --test ulfm -- randomized_campaign --exact --nocapture
run replace PERTINAX_REPLACE_RUNS=1000 timeout 1200 cargo test --release -p pertinax-tests --test ulfm -- randomized_replace_campaign --nocapture
run propagate PERTINAX_PROP_CAMPAIGN_RUNS=1000 timeout 1200 cargo test --release -p pertinax-tests --test propagate -- randomized_campaign --nocapture
run resilient PERTINAX_RESILIENT_CAMPAIGN_RUNS=250 timeout 1200 cargo test --release -p pertinax-tests --test resilient -- randomized_campaign_has_no_hang_and_no_wrong_answer --nocapture
run offload PERTINAX_OFFLOAD_CAMPAIGN=1000 timeout 1200 cargo test --release -p pertinax-tests --test offload -- randomized_campaign --nocapture
run msglog PERTINAX_MSGLOG_CAMPAIGN_RUNS=1000 timeout 1200 cargo test --release -p pertinax-tests --test msglog -- randomized_campaign_has_no_hang_and_no_wrong_answer --nocapture
echo "# done $(date -u +%T)"
