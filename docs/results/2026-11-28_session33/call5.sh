#!/usr/bin/env bash
# Session 33, call 5: the final tree (call 4's N build; later commits docs only): the backward
# suites whole, in eight shards at once, and memcheck / racecheck on a variable-length backward
# case and a window backward case (the preprocess change's two kernels), and the test_cpu suite.
set -u
source benchmarks/device_call.sh
dc_setup N > /dev/null
for k in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$k timeout 220 "$B/test_gpu" --gtest_filter='*Backward*:*Bwd*' > "$O/tests_$k.txt" 2>&1 &
done
wait
for k in 0 1 2 3 4 5 6 7; do echo "shard $k: $(grep -c '^\[       OK' "$O/tests_$k.txt") ok $(grep -E '^\[  (PASSED|FAILED)' "$O/tests_$k.txt" | head -2 | tr '\n' ' ')"; done
cat "$O"/tests_?.txt > "$O/tests.txt"; rm -f "$O"/tests_?.txt
grep -E "^\[  FAILED" "$O/tests.txt" | head
echo "tests: $((SECONDS - DC_T0)) s"
dc_sanitize "$B/test_gpu --gtest_filter=Cases/VarlenBwd.MatchesReferencePerSequence/f16_causal_l127_gqa2_d64" \
  "$B/test_gpu --gtest_filter=Window/BackwardWindow.MatchesReference/bf16_d64_causal_l0_sq113_sk203"
timeout 60 "$B/test_cpu" --gtest_brief=1 2>&1 | tail -2
echo "total: $((SECONDS - DC_T0)) s"
