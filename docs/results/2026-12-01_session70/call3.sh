#!/usr/bin/env bash
# Session 70, call 3: issue 17's causal batch on 16-key pages on the dynamic schedule (two stages,
# persistent) instead of the 16-key-page grid kernel (three stages, one CTA a tile). Session 50
# measured the grid +1.7% over the dynamic schedule; since then session 68's round-based waits
# gave the 3-stage grid +1.1% there and nothing to the 2-stage kernels. X = HEAD + an environment
# switch (dev build), Y = X with FLASH_X_P16DYN=1 (causal packed-query calls on 16-key pages take
# the dynamic schedule). Predicted: Y -1 to +1% against X (the two effects about cancel).
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
{
for a in "--paged 16 --varlen 1,128,129,500,0,3000 --heads 4 --causal" "--paged 16 --varlen 7,300,1000,33 --heads 4 --heads-kv 2 --causal"; do
  timeout 90 "$G/Y/runner" --kernel auto --dhead 128 $a 2>&1 | grep -E "OK|FAIL|rror|xception" | head -12
done
} > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c 'OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
DC_BENCH_FLAGS="" dc_abn "X Y" 'fwd' \
  "--paged 16 --dhead 128 --kernel auto --varlen --heads 16 --causal" \
  "--paged 16 --dhead 128 --kernel auto --varlen --heads 16 --causal" > "$O/ab.txt" 2>&1
dc_summary X Y "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
echo "total: $((SECONDS - DC_T0)) s"
