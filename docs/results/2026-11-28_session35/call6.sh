#!/usr/bin/env bash
# Session 35, call 6: A = the tree (b19e44e); M = the softmax's tile row max as four partial maxima
# and a tree (online_softmax.cuh tile_row_max; and the row sum starts from its first term instead of
# 0 + it). Results are bitwise the same (max is exact in any order, 0 + x = x). Why: call 4's ncu
# source page of fwd_09 (hdim 128 full 16k) showed the row max as one dependent FMNMX chain per row
# (17 deep after the pair maxima, row 1's behind row 0's) before every exp2; FA4 keeps six partial
# maxima; flash's "wait" (fixed-latency dependency) stalls 2.11 per issue against FA4's 1.56.
# Predictions: forward hdim 128 full / causal 16k +0.5-2%, hdim 64 causal 8k +0.5-2%, hdim 256 +0-1%,
# (128, 0) windows +0-1%, softcap +0-1%, decode 0 (memory-bound).
# Then the GPU tests of the forward and decode suites on M (8 shards).
set -u
source benchmarks/device_call.sh
dc_setup M > /dev/null
DC_BENCH_FLAGS="" dc_abn "A M" '^fwd' "--seq 16384 --dhead 128 --kernel auto" "--seq 16384 --dhead 128 --causal --kernel auto" \
  "--seq 8192 --dhead 128 --kernel auto" "--seq 2048 --dhead 128 --kernel auto" "--seq 4096 --dhead 128 --causal --kernel auto" \
  "--seq 8192 --dhead 64 --causal --kernel auto" "--seq 8192 --dhead 64 --kernel auto" "--seq 2048 --dhead 64 --causal --kernel auto" \
  "--seq 8192 --dhead 256 --kernel auto" "--seq 8192 --dhead 256 --causal --kernel auto" \
  "--seq 8192 --dhead 64 --batch 2 --heads 32 --causal --window 128,0 --kernel auto" \
  "--seq 16384 --dhead 128 --batch 1 --heads 16 --causal --window 128,0 --kernel auto" \
  "--seq 16384 --dhead 128 --batch 1 --heads 16 --causal --softcap 30 --kernel auto" \
  "--varlen --dhead 128 --heads 16 --causal --kernel wgmma_persistent" > "$O/ab_fwd.txt" 2>&1
DC_BENCH_FLAGS="" dc_abn "A M" '^decode' "--decode --kernel auto" >> "$O/ab_fwd.txt" 2>&1
dc_summary A M "$O/ab_fwd.txt" | tee "$O/ab_summary.txt"
dc_tests '*Forward*:*Decode*:*Window*' 200 8
echo "total: $((SECONDS - DC_T0)) s"
