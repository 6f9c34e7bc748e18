#!/usr/bin/env bash
# Session 34, call 4: C = f5258e7 (one CTA per 64-row tile for hdim 64 narrow windows); K = 8033368
# (hdim 64 windows of <= 512 keys walk, 3 CTAs per SM); the bundle Y = K + hdim 128 windows of
# <= 512 keys on fwd_10's small tiles (64 x 64, one consumer warpgroup), walking, 2 CTAs per SM
# (24 / 232 registers, 98 KB), instead of fwd_09's 128 x 128 persistent walk at 1 CTA per SM.
# Predicted: K vs C at hdim 64 (512, 0): -1 to +1% (the threshold's guess); Y vs K at hdim 128 16k
# (128, 0) +6-12%, (256, 0) +3-8%, (512, 0) 0 to +4%, (64, 63) +10-20% (misaligned: 130 -> 160 on
# the grid in session 17).
set -u
source benchmarks/device_call.sh
dc_setup Y > /dev/null
W64="--seq 8192 --dhead 64 --batch 2 --heads 32"
W128="--seq 16384 --dhead 128 --batch 1 --heads 16"
DC_BENCH_FLAGS="" dc_abn "C K Y" '^fwd/auto/' "$W64 --causal --window 512,0 --kernel auto" \
  "$W128 --causal --window 128,0 --kernel auto" "$W128 --causal --window 256,0 --kernel auto" \
  "$W128 --causal --window 512,0 --kernel auto" "$W128 --window 64,63 --kernel auto" > "$O/ab.txt" 2>&1
for t in K Y; do dc_summary C $t "$O/ab.txt"; done | tee "$O/ab_summary.txt"
N=8
for k in $(seq 0 $((N - 1))); do
  GTEST_TOTAL_SHARDS=$N GTEST_SHARD_INDEX=$k timeout 200 stdbuf -oL "$B/test_gpu" --gtest_filter='*Window*:*Forward*:Concurrency*' \
    > "$O/tests_$k.txt" 2>&1 &
done
wait
for k in $(seq 0 $((N - 1))); do
  echo "shard $k: $(grep -c '^\[       OK' "$O/tests_$k.txt") ok $(grep -E '^\[  PASSED' "$O/tests_$k.txt")"
done
cat "$O"/tests_*.txt > "$O/tests.txt"; rm -f "$O"/tests_*.txt
grep -E "^\[  FAILED" "$O/tests.txt" | head
dc_runner "--dhead 128 --heads 4 --seq 3000 --window 128,0 --causal" "--dhead 128 --heads 3 --heads-kv 1 --batch 3 --seq 777 --seq-k 1500 --window 200,37" \
  "--dhead 128 --dtype f16 --heads 2 --seq 1001 --window 511,0 --causal" "--dhead 128 --heads 2 --seq 999 --seq-k 600 --window 64,63" \
  "--dhead 64 --heads 2 --seq 1001 --window 511,0 --causal"
dc_sanitize "$B/runner --kernel wgmma_window --dhead 128 --heads 4 --heads-kv 2 --seq 1500 --window 128,0 --causal"
echo "total: $((SECONDS - DC_T0)) s"
