#!/usr/bin/env bash
# Session 33, call 2 (FA4 4.0.0b36 staged in the two calls before): the tree's binaries (kernels
# as at session start). (1) Session 32's prepared question: flash and FA4 at 0.5 s on 8 x 2048 /
# 7 x 2341 / 4 x 4096 / 3 x 5461 (hdim 128, 16 heads), full and causal. (2) Issue 16's table at
# matched timing (benchmarks/fa4_features_matched.py).
set -u
source benchmarks/device_call.sh
dc_setup T > /dev/null
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
timeout 200 python3 docs/results/2026-11-28_session32/next/padded_tiles.py "$B/bench" "$O/padded_tiles.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" | tee "$O/padded_tiles.txt"
echo "padded: $((SECONDS - DC_T0)) s"
timeout 380 python3 benchmarks/fa4_features_matched.py "$B/bench" "$O/features_matched.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" | tee "$O/features_matched.txt"
echo "total: $((SECONDS - DC_T0)) s"
