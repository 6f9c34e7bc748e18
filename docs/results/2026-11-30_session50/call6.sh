#!/usr/bin/env bash
# Session 50, call 6 (carry [".gpu"]). The final build: the README's paged table (session 40's cells),
# two rounds, 0.5 s each.
source benchmarks/device_call.sh
dc_setup K > /dev/null
DC_BENCH_FLAGS="" dc_abn "K" '^fwd' \
  "--paged 16,32,64,256 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16,32,64,256 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 256 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 256 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 64 --heads 32 --kernel auto" > "$O/bench.txt" 2>&1
grep -c TFLOPS "$O/bench.txt"
echo "total: $((SECONDS - DC_T0)) s"
