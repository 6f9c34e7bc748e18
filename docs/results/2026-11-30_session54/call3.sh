#!/usr/bin/env bash
# Session 54, call 3 (carry [".gpu"]). Call 2: one bulk copy a row (P) lost 5-10%. T (bundle, a
# prototype in dec_01): contiguous caches on sm_90 load each tile by tensor-map TMA (one 64 x 64
# box a 64-column block of K and V, thread 0, stage mbarriers); paged calls keep W's kernels.
# W = HEAD. Decode --flush always, two rounds; the decode suites; sanitizers on a tail tile.
source benchmarks/device_call.sh
dc_setup T > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "W T" '^decode' "" | tee "$O/ab.txt" > /dev/null
dc_summary W T "$O/ab.txt" us | tee "$O/ab_summary.txt"
dc_tests 'Decode*:*/Decode*:ConcurrencyCapture.*' 150 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure" "$O/tests.txt" | head -20
dc_sanitize "$B/runner --decode --batch 3 --cache 1000 --dhead 64 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 5 --cache 3000 --dhead 128 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 2 --cache 777 --dhead 256 --heads 4 --heads-kv 1"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
