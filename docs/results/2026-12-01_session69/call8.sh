#!/usr/bin/env bash
# Session 69, call 8: S, the 16-key-page kernel's producer split over two warps: the first loads Q and
# K, the second V (each its own table lookups; HEAD: one warp, K(i) then V(i)). Call 2's ncu pages:
# the producer runs ~260 dependent instructions a step at page 16 (16 boxes issued lane by lane,
# each through ELECT / R2UR / UTMALDG / BRA.U.ANY), ~0.9 us of a ~1.7 us step, so its K loads land
# close to when the consumers want them; call 3's K-before-V order gained ~1% on full page-16 calls.
# H = HEAD. Predicted: page 16 +1-2% (full and causal, dense and packed queries); other page sizes
# unchanged (their kernels do not split).
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
R=$G/S/runner
{
for a in "--batch 2 --seq 1000 --seq-k 3001 --heads 8 --heads-kv 2" "--batch 3 --seq 777 --heads 4 --causal" \
         "--batch 1 --seq 129 --seq-k 17 --heads 2" "--batch 2 --seq 4096 --seq-k 5000 --heads 8 --heads-kv 1 --dtype f16" \
         "--varlen 1,128,129,500,0,3000 --heads 4" "--varlen 1,128,129,500,0,3000 --heads 4 --causal"; do
  timeout 90 "$R" --kernel auto --paged 16 --dhead 128 $a 2>&1 | grep -E "OK|FAIL|rror|xception" | head -12
done
} > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c 'OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
dc_sanitize "$R --kernel auto --paged 16 --batch 2 --seq 1100 --seq-k 1500 --heads 8 --heads-kv 2 --dhead 128 --rows 16" \
  "$R --kernel auto --paged 16 --varlen 1,300,129,700 --heads 4 --dhead 128 --causal --rows 16"
DC_BENCH_FLAGS="" dc_abn "H S" 'fwd' \
  "--paged 16 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 16 --dhead 128 --kernel auto --seq 16384 --batch 1 --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --varlen --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --varlen --heads 16 --causal" > "$O/ab.txt" 2>&1
dc_summary H S "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-110
echo "total: $((SECONDS - DC_T0)) s"
