#!/usr/bin/env bash
# Session 68, call 3: does the consumers' register budget make the paged walk's gap? E45 (hdim 128):
# the dense walk's split 24 / 240 -> 40 / 232 (the paged walk's), the paged walk's 40 / 232 -> 24 / 240
# (the dense walk's; its producer then spills more); the 16-key-page grid kernel unchanged (32 / 232).
# Predictions (before the call): if the budget is the gap, contiguous -2 to -4% and page 256 +1-3%;
# page 16 unchanged (control). Session 52 had the paged walk at 24 / 240 -1 to -2.9% (before E2's
# finding that its table loads cost nothing).
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup Z > /dev/null
export DC_BENCH_FLAGS=""
dc_abn "Z E45" 'fwd' "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 16,256 --dhead 128 --kernel auto --seq 16384 --batch 1 --heads 16" > "$O/paged.txt" 2>&1
dc_summary Z E45 "$O/paged.txt" | tee "$O/summary.txt"
grep -i -E "error|fail" "$O/paged.txt" | head -5
echo "total: $((SECONDS - DC_T0)) s"
