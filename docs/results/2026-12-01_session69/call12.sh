#!/usr/bin/env bash
# Session 69, call 12: U, the consumers' sequence record (and the dynamic schedule's tile) taken from
# lane 0 by shuffles (fa3_warp_uniform): the SASS of call 11's bisection showed the paged walk's loop
# keeping its bounds and barrier phases in vector registers (the record comes from a global load, so
# the compiler cannot know it is warp-uniform) where the dense walk keeps them in uniform ones; with
# U the paged loop's are uniform too (its MUFU order unchanged). Every kernel with per-sequence or
# paged metadata changes.
# H = HEAD. Predicted: +0-1.5% on paged and varlen cells; dense unchanged.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
R=$G/U/runner
{
for a in "--paged 16,256 --batch 2 --seq 1000 --seq-k 3001 --heads 8 --heads-kv 2" "--paged 16,256 --batch 3 --seq 777 --heads 4 --causal" \
         "--varlen 1,128,129,500,0,3000 --heads 4" "--varlen 1,128,129,500,0,3000 --heads 4 --causal" \
         "--paged 16,256 --varlen 1,128,129,500,0,3000 --heads 4 --causal"; do
  timeout 90 "$R" --kernel auto --dhead 128 $a 2>&1 | grep -E "OK|FAIL|rror|xception" | head -12
done
} > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c 'OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
DC_BENCH_FLAGS="" dc_abn "H U" 'fwd' \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16 --causal" > "$O/ab.txt" 2>&1
dc_summary H U "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-110
echo "total: $((SECONDS - DC_T0)) s"
