#!/usr/bin/env bash
# Session 60, call 2 (carry [".gpu"]): P (BwdDqOrder's turn polled by 4 staggered acquire loads,
# exp_P_turn_polls.patch; bundle.txz) against F (HEAD, F.txz), and D (HEAD + diag_det_writer60.patch,
# a bwd_wgmma_wide-only bench: per-step clock() intervals of bwd_04's deterministic writer and
# consumers, summed over calls 11..30).
# Predicted: deterministic hdim 256 +0.5-2.5%; bwd_03 deterministic hdim 128 0 to +1%; hdim 64
# deterministic -1 to +1% (P spills 16-18 LDL in its det kernels).
source benchmarks/device_call.sh
dc_setup P > /dev/null
dc_abn "F P" 'det/' "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --kernel wgmma_wide" \
  "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" \
  "--seq 8192 --dhead 128 --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma" \
  "--seq 8192 --dhead 64 --kernel wgmma" > "$O/ab.txt" 2>&1
dc_summary F P "$O/ab.txt" | tee "$O/ab_summary.txt"
for c in "--seq 8192" "--seq 16384" "--seq 8192 --causal" "--seq 16384 --causal"; do
  echo "D $c"
  timeout 60 "$G/D/bench" --bwd $c --dhead 256 --kernel wgmma_wide --benchmark_filter='det/' 2>&1 | grep -E "DETDIAG|^bwd"
done | tee "$O/diag.txt"
echo "total: $((SECONDS - DC_T0)) s"
