#!/usr/bin/env bash
# Session 34, call 3: C = the tree (f5258e7); the bundle = C + W + X.
# W: dense windows too wide for the persistent walk (span >= 2048) on fwd_09's dynamic schedule
#    (atomic tile counter, the single-tile grid's longest-first order) whatever seqlen_k; they ran
#    one CTA per tile. Predicted: hdim 128 16k (4096, 0) +1-3%, (2048, 2048) +1-2%; hdim 64 8k
#    (4096, 0) +0-2%.
# X: fwd_10 (hdim 64 narrow windows) persistent: 3 x 132 CTAs walk the tiles statically instead of
#    one CTA per 64-row tile (ncu, call 2: 1.7 of 3 CTAs resident on average). Predicted (128, 0)
#    +8-15%, (256, 0) +5-10%, (1024, 0) +0-3%; short causal calls (single-tile grid, now with the
#    persistent Config's separate O buffer) 0.
set -u
source benchmarks/device_call.sh
dc_setup X > /dev/null
W64="--seq 8192 --dhead 64 --batch 2 --heads 32"
W128="--seq 16384 --dhead 128 --batch 1 --heads 16"
DC_BENCH_FLAGS="" dc_abn "C X" '^fwd/auto/' "$W128 --causal --window 4096,0 --kernel auto" "$W128 --window 2048,2048 --kernel auto" \
  "$W128 --causal --window 8192,0 --kernel auto" "$W128 --causal --kernel auto" "$W64 --causal --window 4096,0 --kernel auto" \
  "$W64 --causal --kernel auto" \
  "$W64 --causal --window 128,0 --kernel auto" "$W64 --causal --window 256,0 --kernel auto" "$W64 --causal --window 1024,0 --kernel auto" \
  "$W64 --window 64,63 --kernel auto" "--seq 1024 --batch 16 --heads 16 --dhead 64 --causal --kernel auto" > "$O/ab.txt" 2>&1
dc_summary C X "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_tests '*Window*:*Forward*:Concurrency*' 200
dc_runner "--dhead 64 --heads 4 --seq 3000 --window 128,0 --causal" "--dhead 64 --heads 3 --heads-kv 1 --batch 3 --seq 777 --seq-k 1500 --window 200,37" \
  "--dhead 64 --dtype f16 --heads 2 --seq 1001 --window 1024,0 --causal" "--dhead 128 --heads 2 --seq 5000 --window 4096,0 --causal" \
  "--dhead 128 --heads 2 --heads-kv 1 --seq 4500 --seq-k 5000 --window 2048,2048" "--dhead 64 --heads 4 --seq 1000 --causal"
dc_sanitize "$B/runner --kernel wgmma_window --dhead 64 --heads 4 --heads-kv 2 --seq 1500 --window 128,0 --causal" \
  "$B/runner --kernel wgmma_persistent --dhead 128 --heads 2 --seq 5000 --window 4096,0 --causal"
echo "total: $((SECONDS - DC_T0)) s"
