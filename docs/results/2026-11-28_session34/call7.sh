#!/usr/bin/env bash
# Session 34, call 7 (FA4 4.0.0b36 staged in calls 5-6): the final tree's binaries (c20c91c + the
# hdim 128 walk limited to 384 keys). A runner check of the final window dispatch, then issue 16's
# table at matched timing (benchmarks/fa4_features_matched.py: flash 0.5 s, FA4 0.5 s and bursts).
set -u
source benchmarks/device_call.sh
dc_setup T > /dev/null
dc_runner "--dhead 128 --heads 2 --seq 1000 --window 383,0 --causal" "--dhead 128 --heads 2 --seq 1000 --window 384,0 --causal" \
  "--dhead 128 --heads 2 --heads-kv 1 --seq 700 --seq-k 900 --window 100,100"
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
timeout 420 python3 benchmarks/fa4_features_matched.py "$B/bench" "$O/features_matched.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" | tee "$O/features_matched.txt"
echo "total: $((SECONDS - DC_T0)) s"
