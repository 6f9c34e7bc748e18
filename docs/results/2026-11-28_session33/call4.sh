#!/usr/bin/env bash
# Session 33, call 4: the backward's preprocess with eight lanes per row and the LSE read first
# (kernels/common/backward.cu). A = session start (kernels as dd97731), N = the tree. Two rounds,
# rotated; ncu of N's backward kernels on the (128, 0) window; the backward tests; sanitizers.
set -u
source benchmarks/device_call.sh
dc_setup N > /dev/null
W64="--seq 8192 --dhead 64 --batch 2 --heads 32"
W128="--seq 16384 --dhead 128 --batch 1 --heads 16"
{ dc_ab A N 'bwd/wgmma/' "$W64 --causal --window 128,0 --kernel wgmma" "$W128 --causal --window 128,0 --kernel wgmma" \
    "$W64 --causal --kernel wgmma" "$W128 --causal --kernel wgmma" "--seq 2048 --dhead 128 --kernel wgmma"
  dc_ab A N 'bwd_varlen/wgmma/' "--varlen --dhead 128 --heads 16 --kernel wgmma"; } > "$O/ab.txt" 2>&1
dc_summary A N "$O/ab.txt" | tee "$O/ab_summary.txt"
timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 20 --launch-count 6 \
  "$B/bench" --bwd $W64 --causal --window 128,0 --kernel auto --benchmark_filter=bwd/auto/ --min-time 0.05 > "$O/ncu_bwd_w128.txt" 2>&1
grep -E "^\s+void|gpu__time_duration" "$O/ncu_bwd_w128.txt" | sed -E 's/\(BwdTmaParams\).*|\(BwdParams\).*//' | head -12
dc_tests '*Backward*:*Bwd*' 230
dc_sanitize "$B/runner --bwd --kernel wgmma --dhead 64 --heads 4 --heads-kv 2 --seq 300 --seq-k 555 --causal" \
  "$B/runner --bwd --kernel wgmma --dhead 128 --heads 4 --varlen 1,129,300,77 --causal"
echo "total: $((SECONDS - DC_T0)) s"
