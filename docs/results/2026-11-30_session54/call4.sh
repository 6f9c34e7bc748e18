#!/usr/bin/env bash
# Session 54, call 4 (carry [".gpu"]). Calls 2-3: bulk copies a row and tensor-map TMA both lost
# (5-10%, 3.5-4.5%), so neither the copy instructions nor the copy engine bound the kernel. K
# (bundle): each warp copies the 16 keys of every tile it computes on, and the key loop's two
# __syncthreads become __syncwarp (the four warps stream independently). W = HEAD. Decode --flush
# always, two rounds; the decode suites; sanitizers on a tail tile and pages of 16.
source benchmarks/device_call.sh
dc_setup K > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "W K" '^decode' "" | tee "$O/ab.txt" > /dev/null
dc_summary W K "$O/ab.txt" us | tee "$O/ab_summary.txt"
dc_tests 'Decode*:*/Decode*:ConcurrencyCapture.*' 150 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure" "$O/tests.txt" | head -20
dc_sanitize "$B/runner --decode --batch 3 --cache 1000 --page-size 16 --dhead 64 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 5 --cache 3000 --dhead 128 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 2 --cache 777 --page-size 16 --dhead 256 --heads 4 --heads-kv 1" "$B/runner --decode --batch 2 --cache 999 --dhead 256 --heads 8 --heads-kv 1"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
