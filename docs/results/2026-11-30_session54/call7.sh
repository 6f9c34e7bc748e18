#!/usr/bin/env bash
# Session 54, call 7 (carry [".gpu"]). N (bundle): choose_splits takes one wave of one CTA an SM
# (>= 90% of the SMs) for whole-tile calls (contiguous, pages >= 64) where a split count makes
# one (call 6: 16 x 8k one split 134.7 us against two 139.9; 1 x 128k 16 splits 137.3 / 32 140.7).
# W = HEAD. Issue 19's decode cells (--flush always, two rounds), the decode suites, and N against
# cuDNN timed alike (fa4_decode_matched.py without FA4).
source benchmarks/device_call.sh
dc_setup N > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "W N" '^decode' "" | tee "$O/ab.txt" > /dev/null
dc_summary W N "$O/ab.txt" us | tee "$O/ab_summary.txt"
dc_tests 'Decode*:*/Decode*:ConcurrencyCapture.*' 150 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure" "$O/tests.txt" | head -20
timeout 300 python3 benchmarks/fa4_decode_matched.py "$G/N/bench" "$O/cudnn.json" 2 2>&1 | grep -v Warn | tail -3
echo "total: $((SECONDS - DC_T0)) s"
