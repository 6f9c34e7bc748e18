#!/usr/bin/env bash
# Session 35, call 9: A = the tree's backward kernels (unchanged since b19e44e; A's bench from call 5);
# E = BwdRowTile's dK / dV epilogue with unsigned index arithmetic and each thread's chunk and
# swizzle computed once (copy_out: a pass is one constant offset; st.global.v4 kept by inline PTX).
# SASS: bwd_03 -112 to -240 instructions a kernel, bwd_04 -432 to -440, no spills. Why: call 4's
# source page of bwd_03 at the (128, 0) window (hdim 64): 713 per-CTA instructions per consumer
# warp against FA4's 325, ~300 of them index arithmetic in the epilogue (signed divisions).
# Predicted: (128, 0) window backward hdim 64 8k +1-3%, long calls 0 to +0.3%.
# Order: sanitizers, the A/B, then the backward suites (the device time left is short).
set -u
source benchmarks/device_call.sh
dc_setup E > /dev/null
dc_sanitize "$B/runner --bwd --kernel wgmma --dhead 64 --heads 4 --heads-kv 2 --seq 700 --seq-k 900 --causal --window 128,0" \
  "$B/runner --bwd --kernel wgmma_wide --dhead 256 --heads 2 --seq 300 --seq-k 333 --causal"
dc_ab A E '^bwd/auto/' "--seq 8192 --dhead 64 --batch 2 --heads 32 --causal --window 128,0 --kernel auto" \
  "--seq 8192 --dhead 128 --kernel auto" > "$O/ab_bwd.txt" 2>&1
dc_summary A E "$O/ab_bwd.txt" | tee "$O/ab_summary.txt"
dc_tests '*Backward*:*Bwd*' 95 12
echo "total: $((SECONDS - DC_T0)) s"
