#!/usr/bin/env bash
# Prepared in session 54 for the next session's first decode call (carry [".gpu"]); not run.
# Build here from HEAD (N) and with docs/results/2026-11-30_session54/next_decode_table_prefetch.patch
# (F: pages of 16 / 32 prefetch the page-table line 16 tiles ahead into L2), F as the bundle (for
# its suites), N's bench in X.txz:
#   cmake --build build-gpu --target bench && mkdir -p /tmp/xb/N && cp build-gpu/bin/bench /tmp/xb/N/
#   git apply docs/results/2026-11-30_session54/next_decode_table_prefetch.patch && cmake --build build-gpu
#   bash benchmarks/pack_gpu.sh build-gpu && (cd /tmp/xb && tar cf - N | xz -T2 --lzma2=preset=6,dict=192MiB > "$OLDPWD/.gpu/X.txz")
# Prediction (docs/NOTES.md, session 54): page 16 +0-2% at the heuristic's two CTAs an SM, and at
# one CTA an SM (splits forced: 16 x 8k 1, 1 x 128k 16) within ~2% of the contiguous cache's
# 134.7 / 137.3 us if the table's DRAM misses are what keep pages of 16 at two CTAs an SM (R: 149.9 /
# 153.7); then choose_splits' one-wave rule could take pages of 16 / 32 too.
source benchmarks/device_call.sh
dc_setup F > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "N F" '^decode' "" | tee "$O/ab.txt" > /dev/null
dc_summary N F "$O/ab.txt" us | tee "$O/ab_summary.txt"
for r in 1 2; do
  for c in "--batch 16 --cache 8192 --splits 1" "--batch 16 --cache 8192 --splits 2" \
           "--batch 1 --cache 131072 --splits 16" "--batch 1 --cache 131072 --splits 32"; do
    for t in N F; do
      timeout 60 "$G/$t/bench" --decode --flush always $c --benchmark_filter=page16 2>&1 | grep -E "^decode" |
        grep -o "splits=.*" | sed "s/^/r$r $t $c | /"
    done
  done
done | tee "$O/splits.txt"
dc_tests 'Decode*:*/Decode*:ConcurrencyCapture.*' 150 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"; rm -f "$O/tests.txt"
dc_sanitize "$B/runner --decode --batch 3 --cache 1000 --page-size 16 --dhead 128 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 2 --cache 777 --page-size 4 --dhead 256 --heads 4 --heads-kv 1"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
