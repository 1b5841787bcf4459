#!/bin/sh
# pertinax-bench pingpong, one launch at a time, unbound and bound interleaved.
B=/tmp/wt-new/target/release/pertinax-bench
for i in $(seq 1 ${1:-7}); do
  for mode in none core; do
    if [ $mode = core ]; then L=/tmp/pertinax-bound3; else L=/tmp/wt-new/target/release/pertinax; fi
    cd /tmp && timeout 300 $B pingpong --no-ompi --sizes 0,8 --launches 1 --json --launcher $L 2>/dev/null \
      | python3 -c "import sys,json
for l in sys.stdin:
    r=json.loads(l); print($i, '$mode', r['bytes'], r['median_us'])"
  done
done
