#!/usr/bin/env bash
# Session 57, call 6 (carry [".gpu"]): the final tree (R64 kept). The paged-prefill and window
# suites (fwd_10's paged kernels at both head dims) and the fuzz suites.
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_tests '*/PagedPrefill*:PagedPrefill*:Window/ForwardWindow*' 120 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"; grep -E "^\[  FAILED" "$O/tests.txt" | head; rm -f "$O/tests.txt"
timeout 60 "$B/test_gpu" --gtest_filter='Fuzz*' 2>&1 | grep -E "^\[  (PASSED|FAILED)|Failure" | head -5
echo "total: $((SECONDS - DC_T0)) s"
