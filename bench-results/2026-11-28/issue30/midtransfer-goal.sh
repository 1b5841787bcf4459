#!/usr/bin/env bash
# Issue 30's goal run: the two-rank stream kill, 1,000 jobs at each of
# 33 KiB, 64 KiB, 1 MiB and 16 MiB on each native protocol. Rank 0 sends
# messages of SIZE bytes to rank 1 in a loop; the launcher kills rank 0 at a
# random 2-40 ms (`--kill 0@Nms`, the issue's reproduction); a job that
# runs past 20 s is a hang. Prints one line per size and protocol.
# usage: midtransfer-goal.sh [RUNS]   (from the repository root, after
#        cargo build --release -p pertinax-cli -p pertinax-tests)
set -u
runs=${1:-1000}
bin=target/release
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for proto in stream cma; do
    for size in 33792 65536 1048576 16777216; do
        hangs=0 wrong=0 t0=$(date +%s)
        for i in $(seq 1 "$runs"); do
            ms=$((2 + RANDOM % 39))
            out=$(cd "$dir" && timeout -k 2 20 "$OLDPWD/$bin/pertinax" run -n 2 -x PERTINAX_LARGE=$proto \
                --kill "0@${ms}ms" -- "$OLDPWD/$bin/midtransfer-ranks" p2p "$size" recv 2>&1)
            rc=$?
            if [ $rc = 124 ] || [ $rc = 137 ]; then hangs=$((hangs + 1)); continue; fi
            grep -q "^OK p2p rank=1 .*err=PROC_FAILED" <<<"$out" || { wrong=$((wrong + 1)); echo "$out" | head -5; }
        done
        echo "$proto $size: $runs jobs, $hangs hangs, $wrong wrong, $(($(date +%s) - t0)) s"
    done
done
