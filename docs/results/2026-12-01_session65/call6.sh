#!/usr/bin/env bash
# Session 65, call 6 (the budget's last ~200 s): P4b, the preprocess with four rows a lane group addressed
# once (58 registers where P4 took 128: four blocks an SM instead of two), against F (the final tree),
# two rotated rounds; the runner's reference checks of P4b on backward calls (dense, GQA, windows,
# deterministic: every variant). Not the proof: P4b is left prepared (next_P4b_...patch). carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup P > /dev/null
dc_abn "F P" 'bwd/auto/' \
  "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --window 128,0" \
  "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal --window 128,0" \
  "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32" > "$O/ab.txt" 2>&1
dc_summary F P "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
for a in "--dhead 64 --batch 2 --seq 700 --seq-k 1000 --heads 4 --heads-kv 2 --causal --window 128,0" \
         "--dhead 128 --batch 3 --seq 333 --heads 4 --heads-kv 1" "--dhead 256 --batch 2 --seq 257 --heads 2 --causal"; do
  timeout 60 "$B/runner" --bwd $a 2>&1 | tail -3
done | tee "$O/runner.txt"
echo "total: $((SECONDS - DC_T0)) s"
