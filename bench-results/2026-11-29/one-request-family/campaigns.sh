#!/usr/bin/env bash
# The campaigns that exercise what the one-request-family change touched
# (PendingOp, the guard's requests, the resilient non-blocking queue, the
# hierarchical join's and the offload booster's serde receives), at full
# count on the native backend. Each test prints its summary line.
# usage (from the repository root): bench-results/2026-11-29/one-request-family/campaigns.sh
set -u
t() { echo "== $*"; timeout -k 10 3600 cargo test --release -p pertinax-tests "$@" --nocapture 2>&1 \
    | grep -E "runs|jobs|seeds|campaign|test result|FAILED|panicked|exceeded" ; }
PERTINAX_REQ_CAMPAIGN_RUNS=1000 t --test requests -- randomized_campaign
PERTINAX_PROP_CAMPAIGN_RUNS=1000 PERTINAX_PROPAGATE_RESGUARD_RUNS=1000 t --test propagate -- randomized_campaign survives_seeded_kills
PERTINAX_RESNB_CAMPAIGN_RUNS=1000 t --test resilient_nb -- --exact randomized_campaign_has_no_hang_and_no_wrong_answer
PERTINAX_RESILIENT_HIER_RUNS=1000 t --test resilient_hier -- hier_randomized
PERTINAX_OFFLOAD_CAMPAIGN=1000 t --test offload -- randomized_campaign
