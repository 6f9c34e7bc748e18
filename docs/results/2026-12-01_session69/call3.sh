#!/usr/bin/env bash
# Session 69, call 3: K one tile ahead of V in the paged producer (K(i), then V(i - 1); was K(i),
# V(i) in lockstep). Call 2's ncu page: QA's consumers waited 3.5x longer for K than the grid's
# (~1450 samples per K stage against ~440; V waits unchanged), and its producer woke mostly on
# V's empty barrier (6.8 retries a step) and only then, after V's eight boxes, went for K(i + 1).
# H = HEAD (session 68's bundle); X2 = K ahead + QA (the walk for dense-query full page-16 calls);
# OFF2 = X2 with FLASH_EXP_OFF (K ahead, HEAD's 3-stage grid kernel).
# Predicted: OFF2 vs H: page 16 +0-1%, page 256 (the walk, two stages) +0-1%; X2 vs OFF2 on full
# dense-query page 16: +1-2.5% (QA's K waits back to the grid's, its tile starts gone).
# carry [".gpu"] (bundle = H, X2.txz).
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
mkdir -p "$G/OFF2" && printf '#!/bin/sh\nFLASH_EXP_OFF=1 exec %s "$@"\n' "$G/X2/bench" > "$G/OFF2/bench" && chmod +x "$G/OFF2/bench"
R=$G/X2/runner
{
for a in "--batch 2 --seq 1000 --seq-k 3001 --heads 8 --heads-kv 2" "--batch 3 --seq 777 --heads 4 --causal" \
         "--batch 2 --seq 2048 --heads 8 --rows 128" "--batch 1 --seq 129 --seq-k 17 --heads 2" \
         "--batch 2 --seq 4096 --seq-k 5000 --heads 8 --heads-kv 1 --dtype f16" "--varlen 1,128,129,500,0,3000 --heads 4" \
         "--varlen 1,128,129,500,0,3000 --heads 4 --causal"; do
  timeout 90 "$R" --kernel auto --paged 16,32,256 --dhead 128 $a 2>&1 | grep -E "OK|FAIL|rror|xception" | head -12
done
} > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c 'OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
dc_sanitize "$R --kernel auto --paged 16 --batch 2 --seq 1100 --seq-k 1500 --heads 8 --heads-kv 2 --dhead 128 --rows 16" \
  "$R --kernel auto --paged 16,256 --varlen 1,300,129,700 --heads 4 --dhead 128 --causal --rows 16"
DC_BENCH_FLAGS="" dc_abn "H OFF2 X2" 'fwd' \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 16 --dhead 128 --kernel auto --seq 16384 --batch 1 --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16 --causal" > "$O/ab.txt" 2>&1
dc_summary H OFF2 "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-110
dc_summary OFF2 X2 "$O/ab.txt" | tee -a "$O/ab_summary.txt" | grep paged16 | cut -c1-110
echo "total: $((SECONDS - DC_T0)) s"
