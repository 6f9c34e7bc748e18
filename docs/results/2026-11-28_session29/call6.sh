#!/usr/bin/env bash
# Session 29, call 6 (H200): H = the tree + bwd_04's deterministic dQ hand-off on named barriers
# with a whole writer warp (bwd_03's hdim 64 protocol; only the 8 deterministic bwd_04 kernels
# change in SASS), F = the tree (d2f50b0). Predicted: deterministic hdim 256 +1-3% (bwd_03 at
# hdim 64, whose steps have the same FLOPs: +2.1-3.2%), so det / non-det 0.89-0.91.
# Then the hdim 256 backward tests (and the backward suites' named tests) in 4 shards, and
# memcheck / racecheck on a hdim 256 GQA causal runner case (both modes).
source benchmarks/device_call.sh
dc_setup H
dc_ab F H 'det/' "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --kernel wgmma_wide" \
  "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" > "$O/ab.txt"
dc_summary F H "$O/ab.txt" | tee "$O/ab_summary.txt"
timeout 20 "$B/bench" --bwd --seq 8192 --dhead 256 --kernel wgmma_wide --benchmark_filter='bwd/wgmma_wide/' 2>&1 | grep -E "^bwd" | tee -a "$O/ab_summary.txt"
dc_tests '*Backward*d256*:*Bwd*d256*:BackwardScoresEdges.*:BackwardTiles.*:BackwardEdges.*:BackwardDeterminism.*:BackwardLayouts.*:BackwardChecker.*:VarlenBwdErrors.*:VarlenBwdEdges.*:VarlenBwdChecker.*' 230 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma_wide --batch 2 --seq 300 --seq-k 517 --heads 4 --heads-kv 2 --dhead 256 --causal" > /dev/null
cat "$O/sanitizers.txt"
echo "total: $((SECONDS - DC_T0)) s"
