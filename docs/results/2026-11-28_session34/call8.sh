#!/usr/bin/env bash
# Session 34, call 8: F = the final tree (275c2e6: hdim 128 windows of <= 384 keys on fwd_10's 64 x 64
# tiles, two CTAs per SM); the bundle V = F with those windows on 128-row tiles (two consumer
# warpgroups, pingpong, Q in registers: fwd_09's Config) with 64-key tiles and four stages, walking
# with one CTA per SM. Hypothesis: the small tiles are bound by L2 -> SM traffic (each K/V tile read
# by three 64-row tiles: ~4.8 TB/s at 179 TFLOPS); 128 rows read each K/V tile twice (29% fewer
# bytes per row) for 33% more masked work. Predicted: (128, 0) -5 to +15% (the sign is the test),
# (256, 0) 0 to +10%, (64, 63) -10 to +5%.
set -u
source benchmarks/device_call.sh
dc_setup V > /dev/null
W128="--seq 16384 --dhead 128 --batch 1 --heads 16"
DC_BENCH_FLAGS="" dc_abn "F V" '^fwd/auto/' "$W128 --causal --window 128,0 --kernel auto" "$W128 --causal --window 256,0 --kernel auto" \
  "$W128 --causal --window 383,0 --kernel auto" "$W128 --window 64,63 --kernel auto" > "$O/ab.txt" 2>&1
dc_summary F V "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_runner "--dhead 128 --heads 4 --seq 3000 --window 128,0 --causal" "--dhead 128 --heads 3 --heads-kv 1 --batch 3 --seq 777 --seq-k 1500 --window 200,37" \
  "--dhead 128 --dtype f16 --heads 2 --seq 1001 --window 300,0 --causal"
echo "total: $((SECONDS - DC_T0)) s"
