#!/usr/bin/env bash
# Session 34, call 1: session 33's prepared experiments in one call (A/B only).
# A = the tree (1f56161); Z = exp_preprocess_zeroes_dq.patch; the bundle (P+N) = Z +
# exp_bwd_pdl_after_zeroes.patch + exp_fwd_early_q_release.patch (backward and forward touch
# different kernels, so the backward cells read P and the forward cells read N from one binary).
# Predictions (session 33): (128, 0) window bwd hdim 64 Z +2-3%, P a further +1-2%; causal bwd
# 0 to +0.3%; varlen bwd Z 0, P +0-0.5%. Forward N: hdim 128 (128, 0) window +3-8%, full 2k and
# causal 1k-4k +0.5-1.5%, long calls 0, hdim 64 0 (SASS-identical).
set -u
source benchmarks/device_call.sh
dc_setup P > /dev/null
ln -sfn "$G/P" "$G/N"
W64="--seq 8192 --dhead 64 --batch 2 --heads 32"
W128="--seq 16384 --dhead 128 --batch 1 --heads 16"
{ dc_abn "A Z P" '^bwd/auto/' "$W64 --causal --window 128,0 --kernel auto" "$W128 --causal --window 128,0 --kernel auto" \
    "$W64 --causal --kernel auto" "$W128 --causal --kernel auto" "--seq 2048 --dhead 128 --kernel auto" \
    "--seq 8192 --dhead 256 --causal --kernel auto"
  dc_abn "A Z P" '^bwd_varlen/wgmma/' "--varlen --dhead 128 --heads 16 --kernel wgmma"; } > "$O/ab_bwd.txt" 2>&1
for t in Z P; do dc_summary A $t "$O/ab_bwd.txt"; done | tee "$O/ab_summary.txt"
DC_BENCH_FLAGS="" dc_abn "A N" '^fwd' "$W128 --causal --window 128,0 --kernel auto" "$W128 --causal --window 512,0 --kernel auto" \
  "--seq 2048 --dhead 128 --kernel auto" "--seq 16384 --dhead 128 --kernel auto" "--seq 2048 --dhead 128 --causal --kernel auto" \
  "--seq 4096 --dhead 128 --causal --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" \
  "--varlen --dhead 128 --heads 16 --kernel wgmma_persistent" "--varlen --dhead 128 --heads 16 --causal --kernel wgmma_persistent" > "$O/ab_fwd.txt" 2>&1
dc_summary A N "$O/ab_fwd.txt" | tee -a "$O/ab_summary.txt"
timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 20 --launch-count 6 \
  "$B/bench" --bwd $W64 --causal --window 128,0 --kernel auto --benchmark_filter=bwd/auto/ --min-time 0.05 > "$O/ncu.txt" 2>&1
grep -E "^\s+void|gpu__time_duration|^  [a-z_]+<" "$O/ncu.txt" | sed -E 's/\(BwdTmaParams\).*|\(BwdParams\).*//' | head -14
echo "total: $((SECONDS - DC_T0)) s"
