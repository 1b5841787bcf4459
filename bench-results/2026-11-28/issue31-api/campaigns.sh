#!/usr/bin/env bash
# Issue 31 (second session: one Communicator trait, one erased op, one request family, opt-in capability traits): every campaign at full count on the native backend, every job on one
# of the four protocol settings of pertinax_harness::PROTOCOL_MIX (by its
# seed or kill plan). Each test prints its summary line (--nocapture).
# usage (from the repository root): bench-results/2026-11-28/issue31-api/campaigns.sh
set -u
t() { echo "== $*"; timeout -k 10 3600 cargo test --release -p pertinax-tests "$@" --nocapture 2>&1 \
    | grep -E "runs|jobs|seeds|campaign|test result|FAILED|panicked|exceeded" | grep -v "campaign run [0-9]" ; }
PERTINAX_CAMPAIGN_RUNS=1000 PERTINAX_REPLACE_RUNS=1000 t --test ulfm -- randomized
PERTINAX_REQ_CAMPAIGN_RUNS=1000 t --test requests -- randomized_campaign
PERTINAX_PROP_CAMPAIGN_RUNS=1000 PERTINAX_PROPAGATE_RESGUARD_RUNS=1000 t --test propagate -- randomized_campaign survives_seeded_kills
PERTINAX_RESILIENT_CAMPAIGN_RUNS=1000 t --test resilient -- --exact randomized_campaign_has_no_hang_and_no_wrong_answer
PERTINAX_RESNB_CAMPAIGN_RUNS=1000 t --test resilient_nb -- --exact randomized_campaign_has_no_hang_and_no_wrong_answer
PERTINAX_RESILIENT_HIER_RUNS=1000 t --test resilient_hier -- hier_randomized
PERTINAX_OFFLOAD_CAMPAIGN=1000 t --test offload -- randomized_campaign
PERTINAX_MSGLOG_CAMPAIGN_RUNS=1000 t --test msglog -- randomized
PERTINAX_JACOBI_RUNS=1000 t --test jacobi -- two_death_sweep
PERTINAX_OFFLOAD_EXIT_RUNS=1000 t --test offload -- random_booster_kills
