#!/usr/bin/env bash
# Session 56, call 9 (carry [".gpu"]): P = the bundle: call 8's tree + narrow windows (span < 2048,
# the walk's rule) on pages of 16 keys walk too, instead of the 3-stage grid kernel (hdim 128,
# dense queries), and a new PagedPrefill case (page 16, (100, 20) window, many tiles). H0 = call 7's
# H (page 16 there is the same as call 8's tree). A / B on page 16 windows, then the paged prefill
# suites and both sanitizers on a page 16 window call.
source benchmarks/device_call.sh
dc_setup P > /dev/null
DC_BENCH_FLAGS="" dc_abn "H0 P" '^fwd_paged16' \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --causal --window 128,0 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --causal --window 1000,0 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --window 64,63 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --kernel auto" > "$O/ab.txt"
dc_summary H0 P "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_tests 'PagedPrefill*:*/PagedPrefill*' 200 8 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure" "$O/tests.txt" | head -20
rm -f "$O/tests.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --paged 16 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 128 --window 100,20"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
