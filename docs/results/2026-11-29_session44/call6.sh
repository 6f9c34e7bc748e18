#!/usr/bin/env bash
# Session 44, call 6 (no build change; N = the final tree's build, call 5's bundle): issue 16's
# forward ratios on this build, two rounds: the (4096, 0) window against causal (hdim 128 16k b1 x
# 16, hdim 64 8k b2 x 32), softcap 30 and sinks against causal at both.
set -u
source benchmarks/device_call.sh
dc_setup N > /dev/null
DC_BENCH_FLAGS="" dc_abn "N" '^fwd' \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --softcap 30 --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --sinks --kernel auto" \
  "--batch 2 --heads 32 --seq 8192 --dhead 64 --causal --kernel auto" \
  "--batch 2 --heads 32 --seq 8192 --dhead 64 --causal --window 4096,0 --kernel auto" \
  "--batch 2 --heads 32 --seq 8192 --dhead 64 --causal --softcap 30 --kernel auto" \
  "--batch 2 --heads 32 --seq 8192 --dhead 64 --causal --sinks --kernel auto" > "$O/features.txt" 2>&1
cat "$O/features.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
