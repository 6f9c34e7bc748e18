#!/usr/bin/env bash
# Session 39, call 9. G = the committed build (0c22e3e); W = G + dense-query paged calls at hdim
# 128 on the dense calls' schedules, as session 38's dropped P but with the producers' new
# registers (the walk for full masks: 32 / 232; the dynamic schedule for causal <= 4096 keys:
# 40 / 224), the packed paged dynamic kernel choosing its order at run time in the producer.
set -u
source benchmarks/device_call.sh
dc_setup G > /dev/null
DC_BENCH_FLAGS="" dc_abn "G W" '^fwd' \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--paged 16,256 --batch 8 --seq 2048 --dhead 128 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" > "$O/ab.txt" 2>&1
dc_summary G W "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
