#!/usr/bin/env bash
# Prepared in session 32 for the next session (~2 minutes after FA4's two staging calls; see the
# session summary's staging recipe). The bundle: the tree. padded_tiles.py: flash and FA4 at 0.5 s
# on 8 x 2048 / 7 x 2341 / 4 x 4096 / 3 x 5461 (16k tokens, hdim 128, 16 heads), full and causal.
# Predicted: flash 7 x 2341 ~7-8% under 8 x 2048 (session 32, call 7: 547.8 against ~578); if FA4
# loses under 4%, the varlen gap is in how the partial tiles run, not in the schedule.
set -u
source benchmarks/device_call.sh  # (dc_runner there runs the every-variant check)
dc_setup T > /dev/null
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
timeout 300 python3 docs/results/2026-11-28_session32/next/padded_tiles.py "$B/bench" "$O/padded_tiles.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" | tee "$O/padded_tiles.txt"
echo "total: $((SECONDS - DC_T0)) s"
