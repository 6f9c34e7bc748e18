#!/usr/bin/env bash
# Session 61, call 13 (carry [".gpu"]; the last ~230 s of the budget). bin/ = F: bwd_03's mask-free 80-row step
# body (call 9's D) without S (V after the first stage, dropped: call 12 lost 2.9-3.5% at hdim 64 with S and the
# two-copy loop for every Config); every kernel but the 8 80-row ones SASS-identical to 6b2c9fd (H/bench).
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 1 --seq 300 --seq-k 517 --heads 4 --heads-kv 2 --dhead 128" | grep -E "rc=|SUMMARY" | cut -c1-100
dc_abn "H F" 'bwd/wgmma/' "--seq 16384 --dhead 128 --kernel wgmma" "--seq 8192 --dhead 128 --causal --kernel wgmma" > "$O/ab.txt" 2>&1
dc_summary H F "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_tests '*Backward*:*Bwd*' 100 14 | grep -E "^shard|PASSED|FAILED|ok" | tr '\n' ' '
echo; echo "total: $((SECONDS - DC_T0)) s"
