#!/usr/bin/env bash
# Session 49, call 10 (carry [".gpu"]). The new test of the metadata check's order
# (VarlenOrder.MetadataCheckRanksSequencesLongestFirst) on the final build, alone and under memcheck
# and racecheck, with the packed cases of more than 32 sequences beside it.
source benchmarks/device_call.sh
dc_setup O > /dev/null
timeout 100 "$B/test_gpu" --gtest_filter='VarlenOrder*:*many_spread*' 2>&1 | grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|Expected|Which is|entry" | head -20
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 "$B/test_gpu" --gtest_filter='VarlenOrder*' > "$O/$tool.txt" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$O/$tool.txt" | head -3 | tr '\n' ' ')"
done | tee "$O/sanitizers.txt"
echo "total: $((SECONDS - DC_T0)) s"
