#!/bin/bash
# The native campaigns at full count, one at a time, from the repository
# root, after the fault point `coll.round` joined what `*` counts (seeded
# kills now land between a collective's rounds too).
cd "$(dirname "$0")/../../.."
echo "# head $(git rev-parse --short HEAD) (plus the working tree)"
run() {
  echo "# $1 $(date -u +%T)"; shift
  env "$@" 2>&1 | grep -E "campaign|test result|FAILED|panicked" | grep -v "has been running\|campaign run [0-9]"
}
T="cargo test --release -p pertinax-tests --test"
run ulfm PERTINAX_CAMPAIGN_RUNS=1000 timeout 1200 $T ulfm -- randomized_campaign --exact --nocapture
run replace PERTINAX_REPLACE_RUNS=1000 timeout 1200 $T ulfm -- randomized_replace_campaign --nocapture
run propagate PERTINAX_PROP_CAMPAIGN_RUNS=1000 timeout 1200 $T propagate -- randomized_campaign --nocapture
run resilient PERTINAX_RESILIENT_CAMPAIGN_RUNS=250 timeout 1200 $T resilient -- randomized_campaign_has_no_hang_and_no_wrong_answer --nocapture
run resilient-vops PERTINAX_RESILIENT_VOPS_RUNS=334 timeout 1200 $T resilient -- v_collectives_randomized_campaign_has_no_hang_and_no_wrong_answer --nocapture
run resilient-hier PERTINAX_RESILIENT_HIER_RUNS=334 timeout 1200 $T resilient -- hierarchical_randomized_campaign_has_no_hang_and_no_wrong_answer --nocapture
run resilient-hier-multi PERTINAX_RESILIENT_HIER_RUNS=1000 timeout 1200 $T resilient_hier -- hier_randomized_multi_failure_campaign_has_no_hang_and_no_wrong_answer --nocapture
run resilient-nb PERTINAX_RESNB_CAMPAIGN_RUNS=1000 timeout 1200 $T resilient_nb -- randomized_campaign_has_no_hang_and_no_wrong_answer --nocapture
run offload PERTINAX_OFFLOAD_CAMPAIGN=1000 timeout 1200 $T offload -- randomized_campaign --nocapture
run msglog PERTINAX_MSGLOG_CAMPAIGN_RUNS=1000 timeout 1200 $T msglog -- randomized_campaign_has_no_hang_and_no_wrong_answer --nocapture
echo "# done $(date -u +%T)"
