#!/usr/bin/env bash
# Session 55, call 7 (carry [".gpu"]). Z = the kept tree: pages of 16 / 32 keys in grids of at most one
# CTA an SM run the staged-table kernels (call 6's Q; hdims 64 / 128), and choose_splits' one-wave rule
# takes pages of 16 / 32 where a thread has >= 2 rows a page (hdim 128; hdim 64 at page 32). Every
# other kernel is SASS-identical to HEAD's (96 of 96). N = HEAD. X.txz: decode-only benches N and Z;
# bundle.txz: Z's full build (tests, runner).
# Predicted: 16 x 8k page 16 145.5 -> ~141 us (one split, staged), 1 x 128k page 16 +1% (15 splits),
# page 32 hdim 128 +2-3%; hdim 64 page 32 (one split now, not measured before) -5 to +10%; every other
# cell +-0.3% (same kernels, same splits).
source benchmarks/device_call.sh
dc_setup H > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "N Z" '^decode' "" | tee "$O/ab.txt" > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "N Z" 'page' \
  "--batch 16 --cache 8192 --page-size 32" "--batch 16 --cache 8192 --page-size 32 --dhead 64" \
  "--batch 1 --cache 131072 --page-size 32 --dhead 64" "--batch 16 --cache 8192 --page-size 16 --dhead 64" \
  | tee "$O/ab_pages.txt" > /dev/null
{ dc_summary N Z "$O/ab.txt" us; dc_summary N Z "$O/ab_pages.txt" us; } > "$O/ab_summary.txt"
echo "bench: $((SECONDS - DC_T0)) s"
dc_tests 'Decode*:*/Decode*:ConcurrencyCapture.*' 150 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure" "$O/tests.txt" | head -20
rm -f "$O/tests.txt"
echo "tests: $((SECONDS - DC_T0)) s"
dc_sanitize "$B/runner --decode --batch 2 --cache 1500 --page-size 16 --dhead 128 --heads 8 --heads-kv 2 --splits 1" \
  "$B/runner --decode --batch 2 --cache 1300 --page-size 32 --dhead 64 --heads 8 --heads-kv 2 --splits 2" \
  "$B/runner --decode --batch 40 --cache 300 --page-size 16 --dhead 128 --heads 16 --heads-kv 4 --splits 1"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
