#!/usr/bin/env bash
# Session 34, call 11 (FA4 staged in calls 9-10): issue 18's table (hdims 64 and 128) with the final
# tree's binaries, after the preprocess zeroing and PDL (call 1: causal hdim 64 8k +0.4%, full 2k
# +0.9%): benchmarks/fa4_bwd_matched.py.
set -u
source benchmarks/device_call.sh
dc_setup T > /dev/null
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
timeout 220 python3 benchmarks/fa4_bwd_matched.py "$B/bench" "$O/bwd_matched.json" 64,128 2>&1 |
  grep -v -E "Warning|warn|exe_args" | tee "$O/bwd_matched.txt"
echo "total: $((SECONDS - DC_T0)) s"
