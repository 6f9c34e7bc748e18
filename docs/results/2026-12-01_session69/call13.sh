#!/usr/bin/env bash
# Session 69, call 13: W0, the paged producer's empty-barrier waits by lane 0 alone (then __syncwarp),
# where all 32 lanes polled each empty barrier (~22 polls a step x 32 lanes, on the barriers the
# consumers poll too). Call 11's bisection: the paged walk with the dense producer's boxes (two a K
# tile, plain layout) ran at 0.91 of contiguous where the dense walk with the same boxes runs at 1.0,
# and the paged producer is a whole warp (the dense one thread 0): a cost that grows with the boxes.
# H = HEAD. Predicted: page 16 +1-3%, page 256 +0-2%.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
R=$G/W/runner
{
for a in "--paged 16,256 --batch 2 --seq 1000 --seq-k 3001 --heads 8 --heads-kv 2" "--paged 16,256 --batch 3 --seq 777 --heads 4 --causal" \
         "--paged 16,256 --varlen 1,128,129,500,0,3000 --heads 4 --causal"; do
  timeout 90 "$R" --kernel auto --dhead 128 $a 2>&1 | grep -E "OK|FAIL|rror|xception" | head -12
done
} > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c 'OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
dc_sanitize "$R --kernel auto --paged 16 --batch 2 --seq 300 --seq-k 700 --heads 4 --dhead 128 --rows 16"
DC_BENCH_FLAGS="" dc_abn "H W" 'fwd' \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16 --causal" > "$O/ab.txt" 2>&1
dc_summary H W "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-110
echo "total: $((SECONDS - DC_T0)) s"
