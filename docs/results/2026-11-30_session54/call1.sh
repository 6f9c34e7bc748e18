#!/usr/bin/env bash
# Session 54, call 1 (carry [".gpu"]). Session 53's prepared decode patches against W (HEAD):
# C = next_decode_combined (bundle: runs of 16/32 keys a page lookup, W2's shared destinations,
# lazy O rescale), W2 / L / R = its parts alone (X.txz). Decode --flush always, two rotated rounds;
# then C's decode suites and memcheck / racecheck on pages of 16 / 32 (runs of 1, 2, 4 rows a thread).
source benchmarks/device_call.sh
dc_setup C > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "W C W2 L R" '^decode' "" | tee "$O/ab.txt" > /dev/null
for t in C W2 L R; do dc_summary W $t "$O/ab.txt" us; done | tee "$O/ab_summary.txt"
dc_tests 'Decode*:*/Decode*:ConcurrencyCapture.*' 150 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
dc_sanitize "$B/runner --decode --batch 3 --cache 1000 --page-size 16 --dhead 64 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 3 --cache 1000 --page-size 16 --dhead 128 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 2 --cache 777 --page-size 16 --dhead 256 --heads 4 --heads-kv 1" \
  "$B/runner --decode --batch 3 --cache 999 --page-size 32 --dhead 128 --heads 8 --heads-kv 8"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
