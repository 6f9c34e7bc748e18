#!/usr/bin/env bash
# Session 54, call 8 (carry [".gpu"]). R (bundle): session 53's next_decode_small_page_runs.patch on
# N (HEAD): pages of 16 / 32 keys load a run of keys that share a page with one lookup and one
# source address (call 1: page 16 +0.5 to +1.1% on session 53's tree). Issue 19's decode cells
# (--flush always, two rounds); R's pages of 16 at one and two CTAs an SM (splits forced); the
# decode suites; sanitizers on runs of 1, 2 and 4 rows a thread.
source benchmarks/device_call.sh
dc_setup R > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "N R" '^decode' "" | tee "$O/ab.txt" > /dev/null
dc_summary N R "$O/ab.txt" us | tee "$O/ab_summary.txt"
for c in "--batch 16 --cache 8192 --splits 1" "--batch 16 --cache 8192 --splits 2" \
         "--batch 1 --cache 131072 --splits 16" "--batch 1 --cache 131072 --splits 32"; do
  timeout 60 "$G/R/bench" --decode --flush always $c --benchmark_filter=page16 2>&1 | grep -E "^decode" |
    sed -E 's/ +[0-9.]+ us +[0-9.]+ us +[0-9]+//' | sed "s/^/R $c | /" | grep -o "^R.*|\|splits=.*"  | paste - -
done | tee "$O/splits.txt"
dc_tests 'Decode*:*/Decode*:ConcurrencyCapture.*' 150 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure" "$O/tests.txt" | head -20
rm -f "$O/tests.txt"
dc_sanitize "$B/runner --decode --batch 3 --cache 1000 --page-size 16 --dhead 64 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 3 --cache 1000 --page-size 16 --dhead 128 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 2 --cache 777 --page-size 32 --dhead 256 --heads 4 --heads-kv 1"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
