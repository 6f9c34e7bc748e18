#!/usr/bin/env bash
# Session 39, call 4. K = the committed build (bd2a3e6); R = K with hdim 128's registers split 32
# (producer) / 232 (consumers) instead of 24 / 240 (fwd_09 only). Predictions in docs/NOTES.md.
set -u
source benchmarks/device_call.sh
dc_setup K > /dev/null
DC_BENCH_FLAGS="" dc_abn "K R" '^fwd' \
  "--batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--batch 2 --seq 8192 --dhead 128 --kernel auto" \
  "--batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--varlen 4096,4096,4096,4096 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --kernel auto" > "$O/ab.txt" 2>&1
dc_summary K R "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
