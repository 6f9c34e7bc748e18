#!/usr/bin/env bash
# Session 69, call 7: T, the paged K / V tiles in the plain layout (column block after column block, SBO
# 1024, as the contiguous cache's) from one TMA box: the row-group map's dimensions permuted (groups
# before column blocks), so a box of 128 rows lands as the plain tile. Valid at pages of >= 128 keys
# only (a 16-key page's box would need two destinations), so pages 256 and 4096 only; a measurement.
# Call 5: pages of 4096 keys issue the contiguous walk's instructions but their sched_sync waits
# doubled (the wgmma descriptors' only difference: SBO 2048 against 1024). M0 (call 6: the mask
# from the constant bank) changed nothing.
# H = HEAD. Predicted: if the row-group layout costs the tensor cores, T's pages 256 / 4096 +2-3%
# (toward contiguous); else +-1%.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
for a in "--batch 2 --seq 1024 --seq-k 2048 --heads 8 --heads-kv 2" "--batch 2 --seq 1024 --heads 4 --causal --rows 128"; do
  timeout 90 "$G/T/runner" --kernel auto --paged 256,4096 --dhead 128 $a 2>&1 | grep -E "OK|FAIL|rror|xception" | head -6
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c 'OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
DC_BENCH_FLAGS="" dc_abn "H T" 'fwd' \
  "--paged 256,4096 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 256,4096 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 256 --dhead 128 --kernel auto --seq 16384 --batch 1 --heads 16" > "$O/ab.txt" 2>&1
dc_summary H T "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-110
echo "total: $((SECONDS - DC_T0)) s"
