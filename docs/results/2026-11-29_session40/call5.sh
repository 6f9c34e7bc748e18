#!/usr/bin/env bash
# Session 40, call 5. F = the final build; E = F + two host-only dispatch changes in fwd_09's TU:
# (1) windows too wide for the walk (span >= 2048) walk at hdim 128 instead of taking the dynamic
# schedule (session 39: the dynamic schedule runs 1.6% under the walk on equal tiles); (2) unmasked
# packed-query paged calls on pages >= 128 take the dynamic schedule in the compact order (session
# 39: page 256 -0.8% / +1.4% with two boxes per page and column block).
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
DC_BENCH_FLAGS="" dc_abn "F E" '^fwd' \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --window 2048,2048 --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --kernel auto" \
  "--varlen --paged 256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen 4096,4096,4096,4096 --paged 256 --dhead 128 --heads 16 --kernel auto" > "$O/ab.txt" 2>&1
dc_summary F E "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
