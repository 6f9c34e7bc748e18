#!/usr/bin/env bash
# Session 70, call 2: R, a tile's sequence from the metadata check's order in one load, and the
# check's verdict loaded beside it. A CTA of the single-tile grids (the 16-key-page kernel, the
# packed grids) read before its first K load: the status word, then the order's entry, then
# cu_seqlens / seqused_k, then the page table: four round trips in a row. R: the order's entry
# carries the sequence's span (SeqOrderEntry), and the status word is tested once the tile is found:
# two (status || entry, then the table). H = HEAD, R = this (dev build, hdim 128).
# Predicted: issue 17's batch causal page 16 +1-3%, full page 16 +0.5-1.5%, varlen (contiguous)
# full +0.5-1% (its grid), varlen causal and page 256 (persistent schedules) +-0.5%; 4 x 4096 page 16
# (dense queries: the status word only) +0-1%.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
R=$G/R/runner
{
for a in "--varlen 1,128,129,500,0,3000 --heads 4" "--varlen 1,128,129,500,0,3000 --heads 4 --causal" \
         "--paged 16,256 --varlen 1,128,129,500,0,3000 --heads 4 --causal" "--paged 16,256 --varlen 7,300,1000,33 --heads 4 --heads-kv 2" \
         "--paged 16,256 --batch 2 --seq 1000 --seq-k 3001 --heads 8 --heads-kv 2" "--paged 16 --batch 3 --seq 777 --heads 4 --causal" \
         "--varlen 70,1,2,3,900 --heads 2 --heads-kv 1 --causal --window 100,0"; do
  timeout 90 "$R" --kernel auto --dhead 128 $a 2>&1 | grep -E "OK|FAIL|rror|xception" | head -12
done
} > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c 'OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
dc_sanitize "$R --kernel auto --paged 16 --varlen 1,128,129,500 --heads 4 --dhead 128 --causal"
DC_BENCH_FLAGS="" dc_abn "H R" 'fwd' \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16 --causal" \
  "--paged 16 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" > "$O/ab.txt" 2>&1
dc_summary H R "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
echo "total: $((SECONDS - DC_T0)) s"
