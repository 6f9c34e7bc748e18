#!/usr/bin/env bash
# Session 54, call 2 (carry [".gpu"]). Call 1: fewer instructions a tile (W2, lazy rescale) gained
# nothing, so the loop's issue does not bound it. P (bundle, a prototype in dec_01): one TMA bulk
# copy a K or V row (cp.async.bulk, mbarrier complete_tx) into rows padded by 16 bytes instead of
# 16 cp.async of 16 bytes a thread and tile. W = HEAD. Decode --flush always, two rounds; the
# decode suites; sanitizers on a tail tile and pages of 16.
source benchmarks/device_call.sh
dc_setup P > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "W P" '^decode' "" | tee "$O/ab.txt" > /dev/null
dc_summary W P "$O/ab.txt" us | tee "$O/ab_summary.txt"
dc_tests 'Decode*:*/Decode*:ConcurrencyCapture.*' 150 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure|rror" "$O/tests.txt" | head -20
dc_sanitize "$B/runner --decode --batch 3 --cache 1000 --page-size 16 --dhead 64 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 5 --cache 3000 --dhead 128 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 2 --cache 777 --page-size 16 --dhead 256 --heads 4 --heads-kv 1"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
