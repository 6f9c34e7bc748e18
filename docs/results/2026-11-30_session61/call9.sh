#!/usr/bin/env bash
# Session 61, call 9 (carry [".gpu"]): the backward's CTA start and its front half, A/B.
# H: 6b2c9fd's bench. S: V loaded after the first stage (k_full / v_full; the first S product waits for K and
# stage 0 only; bwd_03 and bwd_04). A: S + helper item 1 (X_PER_STEP: a mask-free copy of bwd_03's 80-row
# step body reading the LSE pairs between the S^T and dP^T issues). C: A + dpsum pairs before dP^T's wait
# (X_DPS_EARLY). D: C + dP^T's wait pinned after the first 4 exponentials (X_PIN=4).
# Predicted (NOTES): S +1-3% on (128, 0) windows, 0 +-0.3% elsewhere; A +0.5-2% hdim 128; C, D -2..+2%.
source benchmarks/device_call.sh
dc_setup S > /dev/null
for t in bin A C D; do
  for a in "--seq 333 --seq-k 517 --heads 4 --heads-kv 2 --dhead 128" "--seq 300 --seq-k 200 --heads 2 --dhead 128 --causal" \
           "--seq 700 --heads 2 --dhead 128 --causal --window 128,0" "--seq 190 --heads 3 --heads-kv 1 --dhead 128 --window 40,7" \
           "--batch 2 --seq 160 --seq-k 1000 --heads 2 --dhead 128 --causal"; do
    timeout 60 "$G/$t/runner" --bwd --kernel wgmma $a 2>&1 | grep -E "OK|FAIL|rror" | sed "s/^/$t /" | head -4
  done
done > "$O/runner.txt" 2>&1
for a in "--seq 300 --seq-k 517 --heads 4 --heads-kv 1 --dhead 64 --causal" "--seq 130 --seq-k 100 --heads 2 --heads-kv 1 --dhead 256 --causal"; do
  timeout 60 "$B/runner" --bwd --kernel auto $a 2>&1 | grep -E "OK|FAIL|rror" | sed "s/^/S /" | head -4
done >> "$O/runner.txt" 2>&1
echo "runner OK $(grep -c OK "$O/runner.txt") FAIL $(grep -c -E 'FAIL|rror' "$O/runner.txt")"
dc_abn "H S A C D" 'bwd/wgmma/' "--seq 8192 --dhead 128 --kernel wgmma" "--seq 8192 --dhead 128 --causal --kernel wgmma" \
  "--seq 16384 --dhead 128 --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 128,0 --kernel wgmma" \
  "--batch 2 --heads 32 --seq 8192 --dhead 64 --causal --window 128,0 --kernel wgmma" > "$O/ab.txt" 2>&1
{ for t in S A C D; do dc_summary H $t "$O/ab.txt"; done; dc_summary S A "$O/ab.txt"; } | tee "$O/ab_summary.txt"
dc_abn "H S" 'bwd/wgmma_wide/|det/' "--seq 8192 --dhead 256 --kernel wgmma_wide" \
  "--batch 2 --heads 8 --seq 8192 --dhead 256 --causal --window 128,0 --kernel wgmma_wide" \
  "--seq 8192 --dhead 64 --causal --kernel wgmma" > "$O/ab2.txt" 2>&1
dc_summary H S "$O/ab2.txt" | tee "$O/ab2_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
