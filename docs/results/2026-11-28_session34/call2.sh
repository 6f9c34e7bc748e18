#!/usr/bin/env bash
# Session 34, call 2: the kept build of call 1 (Z + P + N: the tree with the three session-33
# patches) through ncu's full sections on the two short-window forwards (where their time goes),
# then the forward, backward, concurrency and graph suites of test_gpu (every test but Decode*),
# then memcheck / racecheck.
set -u
source benchmarks/device_call.sh
dc_setup P > /dev/null
W128="--seq 16384 --dhead 128 --batch 1 --heads 16"
W64="--seq 8192 --dhead 64 --batch 2 --heads 32"
timeout 90 ncu --set full --launch-skip 12 --launch-count 1 "$B/bench" $W128 --causal --window 128,0 --kernel auto \
  --benchmark_filter=fwd/auto/ --min-time 0.05 > "$O/ncu_fwd128_w128.txt" 2>&1
timeout 90 ncu --set full --launch-skip 12 --launch-count 1 "$B/bench" $W64 --causal --window 128,0 --kernel auto \
  --benchmark_filter=fwd/auto/ --min-time 0.05 > "$O/ncu_fwd64_w128.txt" 2>&1
grep -E "^  [a-zA-Z_ ]*<|Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|Compute \(SM\)|Registers Per|Achieved Occ" "$O"/ncu_fwd*.txt | head -30
echo "ncu: $((SECONDS - DC_T0)) s"
N=12
for k in $(seq 0 $((N - 1))); do
  GTEST_TOTAL_SHARDS=$N GTEST_SHARD_INDEX=$k timeout 400 stdbuf -oL "$B/test_gpu" --gtest_filter='-Decode*:*/Decode*' \
    > "$O/tests_$k.txt" 2>&1 &
done
wait
for k in $(seq 0 $((N - 1))); do
  echo "shard $k: $(grep -c '^\[       OK' "$O/tests_$k.txt") ok $(grep -E '^\[  PASSED' "$O/tests_$k.txt")"
done
cat "$O"/tests_*.txt > "$O/tests.log"; rm -f "$O"/tests_*.txt
grep -E "^\[  FAILED|SKIPPED \]" "$O/tests.log" | head
echo "tests: $((SECONDS - DC_T0)) s"
dc_sanitize "$B/test_gpu --gtest_filter=Window/BackwardWindow.MatchesReference/bf16_d64_causal_l0_sq113_sk203" \
  "$B/test_gpu --gtest_filter=Cases/VarlenBwd.MatchesReferencePerSequence/f16_causal_l127_gqa2_d64" \
  "$B/runner --bwd --kernel wgmma --batch 2 --seq 300 --seq-k 555 --heads 8 --heads-kv 2 --dhead 128 --causal" \
  "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 2 --seq 700 --seq-k 1333 --causal" \
  "$B/runner --kernel wgmma_persistent --dhead 128 --heads 2 --seq 2000 --window 128,0 --causal"
echo "total: $((SECONDS - DC_T0)) s"
