#!/usr/bin/env bash
# Session 59, call 4: bwd_04's deterministic dQ staged in the step's own Q and dO columns (G) against
# HEAD (F): two dO stages again, no staging buffer, the dQ writer releases each stage. Prediction
# (NOTES): deterministic hdim 256 +5-10% (0.89-0.91 -> 0.95-0.98 of non-deterministic),
# non-deterministic unchanged (+-0.5%). Then the hdim 256 / determinism suites and sanitizers.
source benchmarks/device_call.sh
dc_setup G > /dev/null
dc_abn "F G" '^bwd/' "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --kernel wgmma_wide" \
  "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" > "$O/ab_bwd.txt" 2>&1
dc_summary F G "$O/ab_bwd.txt" | tee "$O/ab_summary.txt"
dc_tests '*Backward*d256*:*BackwardDeterminism*:*BackwardEdges*:*BackwardScoresEdges*:*VarlenBwd*:FuzzBackward*:*BackwardWindow*' 200 8 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma_wide --batch 1 --seq 300 --seq-k 200 --heads 2 --dhead 256 --causal" \
  "$B/runner --bwd --kernel wgmma_wide --batch 2 --seq 257 --seq-k 391 --heads 4 --heads-kv 2 --dhead 256"
echo "total: $((SECONDS - DC_T0)) s"
