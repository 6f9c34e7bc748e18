#!/usr/bin/env bash
# Session 31, call 5 (H200). F = the final code of call 4 (.gpu/bundle.txz; its backward is the
# tree's, SASS-identical); D = exp_bwd04_det_stage_split.patch: bwd_04's deterministic mode with
# two stages of Q and dO (Bwd04Smem's layout) and no staging buffer of its own: warpgroup 0 (dV, dQ,
# dK) stages its dQ half in the stage's dO buffer once both dVs are done, warpgroup 1 (dV, dK, dQ)
# in its Q buffer once both dKs are done (mbarriers dv_done / dk_done); the writer frees the stage
# after reading both halves. Call 1's Z (both halves through dO's buffer) lost 1.3-5.2%: warpgroup 1
# waited for the writer to read warpgroup 0's half, staged only a third of a step earlier. Here no
# consumer waits for the writer. Only the 8 deterministic bwd_04 kernels change in SASS (no spills).
# Predicted: deterministic hdim 256 +3-7% (session 22: the one dO stage ~9%).
source benchmarks/device_call.sh
dc_setup F
d="--dhead 256 --kernel wgmma_wide"
dc_ab F D 'det/' "--seq 8192 $d" "--seq 16384 $d" "--seq 8192 $d --causal" "--seq 16384 $d --causal" > "$O/ab.txt"
for c in "--seq 8192 $d" "--seq 16384 $d --causal"; do
  timeout 30 "$B/bench" --bwd $c --benchmark_filter='bwd/wgmma_wide/' 2>&1 | grep -E "^bwd" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/F /"
done >> "$O/ab.txt"
{ dc_summary F D "$O/ab.txt"; grep "^F bwd/wgmma_wide/" "$O/ab.txt"; } | tee "$O/ab_summary.txt"
B=$G/D
dc_tests '*Backward*d256*:*Bwd*d256*:BackwardScoresEdges.*:BackwardTiles.*:BackwardEdges.*:BackwardDeterminism.*:BackwardLayouts.*:BackwardChecker.*:VarlenBwdErrors.*:VarlenBwdEdges.*:VarlenBwdChecker.*:Cases/VarlenBwd.*' 250 | tee -a "$O/ab_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma_wide --batch 2 --seq 300 --seq-k 517 --heads 4 --heads-kv 2 --dhead 256 --causal" > /dev/null
cat "$O/sanitizers.txt"
echo "total: $((SECONDS - DC_T0)) s"
