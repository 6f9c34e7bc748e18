#!/usr/bin/env bash
# Session 31, call 6 (H200): call 5's D hung (every deterministic bench ran into its 60 s timeout).
# Found here on paper: nothing kept a warpgroup from staging step i + 1's dQ half before the writer,
# waiting for its turn, had seen step i's, so staged(c) completed two phases under the writer's parity
# wait. Now one staged barrier per warpgroup and stage (the stage's reuse waits for the writer).
# Same A/B, tests and sanitizers as call 5, guarded: a runner smoke test first.
source benchmarks/device_call.sh
dc_setup F
timeout 30 "$G/D/runner" --bwd --kernel wgmma_wide --batch 2 --seq 1000 --heads 4 --heads-kv 2 --dhead 256 --causal 2>&1 | tail -4 | tee "$O/smoke.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "smoke failed"; exit 5; }
d="--dhead 256 --kernel wgmma_wide"
timeout 25 "$G/D/bench" --bwd --seq 8192 $d --benchmark_filter='det/' 2>&1 | grep -E "^bwd" | tee -a "$O/smoke.txt" | grep -q TFLOPS || { echo "bench smoke failed"; exit 6; }
dc_ab F D 'det/' "--seq 8192 $d" "--seq 16384 $d" "--seq 8192 $d --causal" "--seq 16384 $d --causal" > "$O/ab.txt"
dc_summary F D "$O/ab.txt" | tee "$O/ab_summary.txt"
B=$G/D
dc_tests '*Backward*d256*:*Bwd*d256*:BackwardScoresEdges.*:BackwardTiles.*:BackwardEdges.*:BackwardDeterminism.*:BackwardLayouts.*:BackwardChecker.*:VarlenBwdErrors.*:VarlenBwdEdges.*:VarlenBwdChecker.*:Cases/VarlenBwd.*' 220 | tee -a "$O/ab_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma_wide --batch 2 --seq 300 --seq-k 517 --heads 4 --heads-kv 2 --dhead 256 --causal" > /dev/null
cat "$O/sanitizers.txt"; rm -f "$O/memcheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
