#!/usr/bin/env bash
# Session 60, call 4 (carry [".gpu"]): R as committed (gpu_counter.cuh wait_equal_acquire_gpu: the
# deterministic dQ writers' turn spin on relaxed loads, one fence.acquire.gpu after it; bundle
# bin/ = R with test_gpu, F/ = HEAD's bench). Proof: every backward suite, memcheck and racecheck
# on both Hopper rungs' runner cases (both modes); and a second A/B on other cells.
# Predicted (call 3's): deterministic hdim 128 +1-2%, hdim 256 +0-1%, hdim 64 0%.
source benchmarks/device_call.sh
dc_setup R > /dev/null
dc_tests '*Backward*:*Bwd*' 250 8 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 1 --seq 300 --seq-k 517 --heads 4 --heads-kv 2 --dhead 128 --causal" \
  "$B/runner --bwd --kernel wgmma_wide --batch 1 --seq 130 --seq-k 100 --heads 2 --heads-kv 1 --dhead 256 --causal"
dc_abn "F R" 'det/' "--seq 16384 --dhead 128 --kernel wgmma" "--seq 8192 --dhead 128 --causal --kernel wgmma" \
  "--seq 8192 --dhead 64 --causal --kernel wgmma" "--seq 16384 --dhead 64 --kernel wgmma" \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" > "$O/ab.txt" 2>&1
dc_summary F R "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
