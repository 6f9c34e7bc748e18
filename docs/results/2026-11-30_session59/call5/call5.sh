#!/usr/bin/env bash
# Session 59, call 5: G again with one staged barrier per ring stage (call 4's G deadlocked in
# deterministic mode: one barrier a warpgroup let the consumers complete two of its phases before
# the writer waited for the first). Correctness first, then the two open cells F / G.
source benchmarks/device_call.sh
dc_setup G > /dev/null
timeout 40 "$B/runner" --bwd --kernel wgmma_wide --batch 1 --seq 300 --seq-k 200 --heads 2 --dhead 256 --causal > "$O/runner.txt" 2>&1
echo "runner rc=$?"; grep -cE "\[OK\]" "$O/runner.txt"; grep -E "FAIL" "$O/runner.txt" | head -3
timeout 30 "$B/bench" --bwd --seq 8192 --dhead 256 --kernel wgmma_wide --benchmark_filter=det > /dev/null 2>&1
ok=$?; echo "det bench rc=$ok"
dc_tests '*Backward*d256*:BackwardDeterminism*:FuzzBackward*' 120 8 | tee "$O/tests_summary.txt"
if [ $ok -eq 0 ]; then
  dc_abn "F G" '^bwd/' "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" > "$O/ab_bwd.txt" 2>&1
  dc_summary F G "$O/ab_bwd.txt" | tee "$O/ab_summary.txt"
fi
dc_sanitize "$B/runner --bwd --kernel wgmma_wide --batch 1 --seq 130 --seq-k 100 --heads 2 --heads-kv 1 --dhead 256 --causal"
echo "total: $((SECONDS - DC_T0)) s"
