#!/usr/bin/env bash
# Session 70, call 4b (a diagnostic; call 4 hung: the loads-only branch skipped pipe.advance): how long the K/V loads alone take. X = HEAD + a run-time
# switch (dev build); L = X with FLASH_X_LOADS=1: the consumers wait for each K and V tile, take the
# pingpong turns and release it, and do no GEMM or softmax (O is garbage). Every kernel, contiguous
# and paged, runs its own producer unchanged. If L's page-16 time is near X's contiguous time, the
# 16-key pages' loads bound the paged kernels; if well under, the gap is the overlap, not the loads.
# bench reports TFLOPS of the call's FLOPs: time = FLOPs / TFLOPS.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
DC_BENCH_FLAGS="" dc_abn "X L" 'fwd' \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16 --causal" \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16" > "$O/ab.txt" 2>&1
dc_summary X L "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
echo "total: $((SECONDS - DC_T0)) s"
