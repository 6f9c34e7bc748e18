#!/usr/bin/env bash
# Prepared in session 33 for the next one (not run). Build recipe, here: build the tree, then
#   mkdir -p /tmp/Ypack/A && cp build-gpu/bin/bench /tmp/Ypack/A/bench
#   git apply docs/results/2026-11-28_session33/next/exp_preprocess_zeroes_dq.patch
#   cmake --build --preset h200 && benchmarks/pack_gpu.sh
#   tar -cf - -C /tmp/Ypack A | xz -T2 --lzma2=preset=6,dict=192MiB > .gpu/A.txz
# The change: dense backward calls zero their fp32 dQ accumulator in the preprocess (each row of
# the row arrays its own head_dim floats, float4 stores by the row's eight lanes) instead of a
# cudaMemsetAsync over it before the preprocess; the kv_done counters keep a small memset.
# Predicted: the hdim 64 (128, 0) window backward (memset ~34 us + preprocess 51 us of ~441 us)
# +2-3%; causal hdim 64 8k +0.2%; hdim 128 16k 0 to +0.2%; varlen unchanged (same path).
set -u
source benchmarks/device_call.sh
dc_setup N > /dev/null
W64="--seq 8192 --dhead 64 --batch 2 --heads 32"
W128="--seq 16384 --dhead 128 --batch 1 --heads 16"
dc_ab A N 'bwd/wgmma' "$W64 --causal --window 128,0 --kernel wgmma" "$W128 --causal --window 128,0 --kernel wgmma" \
  "$W64 --causal --kernel wgmma" "$W128 --causal --kernel wgmma" "--seq 2048 --dhead 128 --kernel wgmma" > "$O/ab.txt" 2>&1
dc_summary A N "$O/ab.txt" | tee "$O/ab_summary.txt"
timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 20 --launch-count 6 \
  "$B/bench" --bwd $W64 --causal --window 128,0 --kernel auto --benchmark_filter=bwd/auto/ --min-time 0.05 > "$O/ncu.txt" 2>&1
grep -E "^\s+void|gpu__time_duration" "$O/ncu.txt" | sed -E 's/\(BwdTmaParams\).*|\(BwdParams\).*//' | head -12
for k in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$k timeout 220 "$B/test_gpu" --gtest_filter='*Backward*:*Bwd*' > "$O/tests_$k.txt" 2>&1 &
done
wait
for k in 0 1 2 3 4 5 6 7; do echo "shard $k: $(grep -c '^\[       OK' "$O/tests_$k.txt") ok"; done
cat "$O"/tests_?.txt > "$O/tests.txt"; rm -f "$O"/tests_?.txt; grep -E "^\[  FAILED" "$O/tests.txt" | head
dc_sanitize "$B/test_gpu --gtest_filter=Window/BackwardWindow.MatchesReference/bf16_d64_causal_l0_sq113_sk203"
echo "total: $((SECONDS - DC_T0)) s"
