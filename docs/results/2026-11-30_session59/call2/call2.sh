#!/usr/bin/env bash
# Session 59, call 2: bwd_03 with DescAdd::kWhole (U64 in bwd_03 alone; call 1's B binary had it
# everywhere) proven: every backward suite, then memcheck / racecheck of bwd_03 at hdims 64 / 128
# (both modes: runner --bwd runs each variant deterministic too), GQA, unequal lengths, causal.
source benchmarks/device_call.sh
dc_setup U > /dev/null
dc_tests '*Backward*:*Bwd*' 300 8 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 2 --seq 300 --seq-k 517 --heads 4 --heads-kv 2 --dhead 128 --causal" \
  "$B/runner --bwd --kernel wgmma --batch 1 --seq 333 --seq-k 200 --heads 4 --heads-kv 1 --dhead 64"
echo "total: $((SECONDS - DC_T0)) s"
