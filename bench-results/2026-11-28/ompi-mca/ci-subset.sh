#!/bin/bash
# CI's first .ci/mpi-tests call (.ci/run), plus the plain-mode tests
# taken off native-only.txt.
cd "$(dirname "$0")/../../.."
PERTINAX_MSGLOG_CAMPAIGN_RUNS=4 timeout -k 10 1800 .ci/mpi-tests contract communicator midtransfer ulfm propagate:killed \
    resilient:randomized_campaign_has \
    resilient_hier:hier_master_and_deputy offload:killed \
    offload:the_launchers_fault_plan offload:several_failures \
    offload:recover_domain \
    offload_apps:nbody_global offload_apps:worker_killed \
    checkpoint:kill_while_checkpointing checkpoint:buddy_of \
    checkpoint:adjacent_ranks_killed_at_once_without \
    msglog:a_crash_during_the_replay \
    msglog:two_neighbours msglog:randomized \
    resilient_apps:ep_plain_stops msglog:plain_mode_does_not_recover
