#!/usr/bin/env bash
# Prepared in session 33 for the next one (not run). Build recipe, here, from the tree:
#   cmake --build --preset h200 && mkdir -p /tmp/Ypack/A /tmp/Ypack/Z && cp build-gpu/bin/bench /tmp/Ypack/A/
#   git apply docs/results/2026-11-28_session33/next/exp_preprocess_zeroes_dq.patch
#   cmake --build --preset h200 && cp build-gpu/bin/bench /tmp/Ypack/Z/
#   git apply docs/results/2026-11-28_session33/next/exp_bwd_pdl_after_zeroes.patch
#   cmake --build --preset h200 && benchmarks/pack_gpu.sh          # the bundle: P (both patches)
#   tar -cf - -C /tmp/Ypack A Z | xz -T2 --lzma2=preset=6,dict=192MiB > .gpu/A.txz
# Z: dense backward calls zero the fp32 dQ accumulator in the preprocess (each row of the row arrays
# its own head_dim floats, float4 stores by the row's eight lanes) instead of a cudaMemsetAsync
# before it; the kv_done counters keep a small memset (FA4's preprocess does the same).
# P: Z + programmatic dependent launch of the Hopper dkv kernels (bwd_03 / bwd_04) after the
# preprocess: the preprocess lets them start at once, they initialise their barriers and then
# wait (griddepcontrol.wait) before any role runs (FA4 starts its K and first Q loads before it).
# Predicted (hdim 64 (128, 0) window backward, ~441 us: memset ~34 us + preprocess 51 us):
# Z +2-3%, P a further +1-2%; causal hdim 64 8k / hdim 128 16k 0 to +0.3%; varlen (memset kept)
# 0 for Z, +0-0.5% for P.
set -u
source benchmarks/device_call.sh
dc_setup P > /dev/null
W64="--seq 8192 --dhead 64 --batch 2 --heads 32"
W128="--seq 16384 --dhead 128 --batch 1 --heads 16"
{ dc_abn "A Z P" '^bwd/auto/' "$W64 --causal --window 128,0 --kernel auto" "$W128 --causal --window 128,0 --kernel auto" \
    "$W64 --causal --kernel auto" "$W128 --causal --kernel auto" "--seq 2048 --dhead 128 --kernel auto" \
    "--seq 8192 --dhead 256 --causal --kernel auto"
  dc_abn "A Z P" '^bwd_varlen/wgmma/' "--varlen --dhead 128 --heads 16 --kernel wgmma"; } > "$O/ab.txt" 2>&1
for t in Z P; do dc_summary A $t "$O/ab.txt"; done | tee "$O/ab_summary.txt"
timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 20 --launch-count 6 \
  "$B/bench" --bwd $W64 --causal --window 128,0 --kernel auto --benchmark_filter=bwd/auto/ --min-time 0.05 > "$O/ncu.txt" 2>&1
grep -E "^\s+void|gpu__time_duration" "$O/ncu.txt" | sed -E 's/\(BwdTmaParams\).*|\(BwdParams\).*//' | head -12
for k in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$k timeout 220 "$B/test_gpu" --gtest_filter='*Backward*:*Bwd*:Concurrency*:*Graph*' > "$O/tests_$k.txt" 2>&1 &
done
wait
for k in 0 1 2 3 4 5 6 7; do echo "shard $k: $(grep -c '^\[       OK' "$O/tests_$k.txt") ok"; done
cat "$O"/tests_?.txt > "$O/tests.txt"; rm -f "$O"/tests_?.txt; grep -E "^\[  FAILED" "$O/tests.txt" | head
dc_sanitize "$B/test_gpu --gtest_filter=Window/BackwardWindow.MatchesReference/bf16_d64_causal_l0_sq113_sk203" \
  "$B/test_gpu --gtest_filter=Cases/VarlenBwd.MatchesReferencePerSequence/f16_causal_l127_gqa2_d64"
echo "total: $((SECONDS - DC_T0)) s"
