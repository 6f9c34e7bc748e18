#!/usr/bin/env bash
# Session 48, call 8 (carry [".gpu"]). F2 = the final tree (call 6's build with the preprocess
# zeroing whole accumulator tiles in deterministic calls): every backward suite (12 shards, all
# shard lines kept), memcheck of the previously failing test, then runner --bwd on two shapes.
source benchmarks/device_call.sh
dc_setup F2 > /dev/null
dc_tests '*Backward*:*Bwd*' 300 12 > "$O/tests_summary.txt" 2>&1
grep -c "^\[       OK" "$O/tests.txt" | sed 's/^/tests OK: /'
grep -E "^\[  FAILED|FAILED  \]|Failure|error " "$O/tests.txt" | sort | uniq -c | head -20
grep -E "shard|PASSED|FAILED" "$O/tests_summary.txt" | tr '\n' ' '; echo
grep -E "AutoAndCallerWorkspace|PoisonedCallerWorkspace" "$O/tests.txt" | grep -E "OK|FAILED"
rm -f "$O/tests.txt"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test_gpu" \
  --gtest_filter='VarlenBwdEdges.AutoAndCallerWorkspace:BackwardEdges.PoisonedCallerWorkspace' > "$O/memcheck.txt" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$O/memcheck.txt" | head -4
echo "total: $((SECONDS - DC_T0)) s"
