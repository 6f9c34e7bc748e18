#!/usr/bin/env bash
# Session 46, call 8 (FA4 4.0.0b36 staged by calls 6-7, the two halves of part 1; carry
# [".anchors/fa4-part2", ".gpu"]). On the kept build (F): issue 16's forward rows
# (FA4_MODES=fwd fa4_features_matched.py) and issue 17's varlen rows (fa4_varlen_matched.py,
# forward and backward), flash beside FA4 at one timing. Last measured with FA4: session 36
# (issue 16) and session 39 (issue 17); the forward kernels gained 3-6% since (sessions 43-45).
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || echo "fa4 not staged"
source benchmarks/device_call.sh
dc_setup F > /dev/null
FA4_MODES=fwd timeout 280 python3 benchmarks/fa4_features_matched.py "$B/bench" "$O/features_matched.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/features.txt"
tail -14 "$O/features.txt"
timeout 250 python3 benchmarks/fa4_varlen_matched.py "$B/bench" "$O/varlen_matched.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/varlen.txt"
tail -6 "$O/varlen.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
