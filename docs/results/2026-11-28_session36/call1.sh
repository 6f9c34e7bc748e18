#!/usr/bin/env bash
# Session 36, call 1: A = the tree at 12c5149; B = O rescaled only when a row's max moves by more
# than 2^8 (fwd_09 / fwd_10, OnlineSoftmax::probs<kLazy>); C = B + two partial maxima for hdim
# 256's 80-key tiles. Predictions in docs/NOTES.md "Session 36". Benches only (call 2: tests).
set -u
source benchmarks/device_call.sh
dc_setup B > /dev/null
DC_BENCH_FLAGS="" dc_abn "A B C" '^fwd' "--seq 16384 --dhead 128 --kernel auto" "--seq 16384 --dhead 128 --causal --kernel auto" \
  "--seq 8192 --dhead 128 --kernel auto" "--seq 8192 --dhead 128 --causal --kernel auto" "--seq 2048 --dhead 128 --kernel auto" \
  "--seq 8192 --dhead 64 --causal --kernel auto" "--seq 8192 --dhead 64 --kernel auto" "--seq 2048 --dhead 64 --causal --kernel auto" \
  "--seq 8192 --dhead 256 --kernel auto" "--seq 8192 --dhead 256 --causal --kernel auto" "--seq 16384 --dhead 256 --kernel auto" \
  "--seq 8192 --dhead 64 --batch 2 --heads 32 --causal --window 128,0 --kernel auto" \
  "--seq 16384 --dhead 128 --batch 1 --heads 16 --causal --window 4096,0 --kernel auto" \
  "--seq 16384 --dhead 128 --batch 1 --heads 16 --causal --softcap 30 --kernel auto" \
  "--seq 8192 --dhead 64 --batch 2 --heads 32 --causal --softcap 30 --kernel auto" \
  "--varlen --dhead 128 --heads 16 --causal --kernel wgmma_persistent" > "$O/ab_fwd.txt" 2>&1
dc_summary A B "$O/ab_fwd.txt" | tee "$O/ab_summary.txt"
dc_summary A C "$O/ab_fwd.txt" | tee -a "$O/ab_summary.txt"
echo "bench done: $((SECONDS - DC_T0)) s"
echo "total: $((SECONDS - DC_T0)) s"
