#!/usr/bin/env bash
# Session 56, call 2 (carry [".gpu"]): the tree with D kept (paged decode calls deferred, page indices
# clamped; DecodeErrors.BadMetadataWritesNothing now at hdims 64 and 128, the latter's pages of 16 /
# 32 staged). The decode suites; memcheck over DecodeErrors (bad pages and lengths read before the
# verdict); both sanitizers on staged and unstaged paged calls; the decode cells beside cuDNN timed
# alike (fa4_decode_matched.py without FA4), two alternations.
source benchmarks/device_call.sh
dc_setup H > /dev/null
dc_tests 'Decode*:*/Decode*:ConcurrencyCapture.*' 150 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure" "$O/tests.txt" | head -20
rm -f "$O/tests.txt"
timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test_gpu" --gtest_filter='DecodeErrors.*' > "$O/memcheck_errors.txt" 2>&1
echo "memcheck DecodeErrors rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$O/memcheck_errors.txt" | head -5
echo "tests: $((SECONDS - DC_T0)) s"
dc_sanitize "$B/runner --decode --batch 3 --cache 1100 --page-size 16 --dhead 128 --heads 8 --heads-kv 2 --splits 1" \
  "$B/runner --decode --batch 2 --cache 1700 --page-size 32 --dhead 128 --heads 8 --heads-kv 2 --splits 3" \
  "$B/runner --decode --batch 2 --cache 1300 --page-size 16 --dhead 64 --heads 8 --heads-kv 2 --splits 2" \
  "$B/runner --decode --batch 2 --cache 1300 --page-size 256 --dhead 256 --heads 8 --heads-kv 2 --splits 2"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "sanitizers: $((SECONDS - DC_T0)) s"
timeout 250 python3 benchmarks/fa4_decode_matched.py "$B/bench" "$O/decode_matched.json" 2 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/decode.txt"
tail -3 "$O/decode.txt" | cut -c1-300
echo "total: $((SECONDS - DC_T0)) s"
