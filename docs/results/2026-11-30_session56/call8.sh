#!/usr/bin/env bash
# Session 56, call 8 (carry [".gpu"]): K = the kept tree (dense-query full and narrow-window paged
# calls at hdim 128 walk from pages of 32 keys; two new PagedPrefill cases: page 32 full, page 64
# (200, 0) window, many tiles); H0 = call 7's H. The paged prefill suites, both sanitizers on the
# walk at pages 32 / 64, and the narrow causal windows on pages of 32 / 64 (grid -> walk, not timed
# in call 7; contiguous narrow windows walk since session 34), two rounds.
source benchmarks/device_call.sh
dc_setup K > /dev/null
dc_tests 'PagedPrefill*:*/PagedPrefill*' 200 8 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure" "$O/tests.txt" | head -20
rm -f "$O/tests.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --paged 32,64 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 128" \
  "$B/runner --kernel wgmma_persistent --paged 64 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 128 --causal --window 200,0"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
DC_BENCH_FLAGS="" dc_abn "H0 K" '^fwd_paged' \
  "--paged 32,64 --batch 4 --seq 4096 --dhead 128 --causal --window 128,0 --kernel auto" \
  "--paged 32,64 --batch 4 --seq 4096 --dhead 128 --causal --window 1000,0 --kernel auto" > "$O/ab.txt"
dc_summary H0 K "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
