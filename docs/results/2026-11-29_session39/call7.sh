#!/usr/bin/env bash
# Session 39, call 7. F = the committed build (call 4's split: 32 / 232 in hdim 128's busy
# kernels); S = F with 40 / 224 there (the paged dynamic kernel's producer spills 33 -> 2, its
# consumers none). Predictions in docs/NOTES.md "Session 39".
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
DC_BENCH_FLAGS="" dc_abn "F S" '^fwd' \
  "--batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--varlen 4096,4096,4096,4096 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --kernel auto" > "$O/ab.txt" 2>&1
dc_summary F S "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
