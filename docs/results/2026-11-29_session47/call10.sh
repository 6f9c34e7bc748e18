#!/usr/bin/env bash
# Session 47, call 10 (carry [".gpu"]). R = session 46's library with the non-deterministic
# backward's walk rotated per key block (R.txz: bench, runner); A = session 46 (A.txz). Runner on
# R, then A / R rotated, two rounds.
source benchmarks/device_call.sh
dc_setup X > /dev/null
for a in "--dhead 128 --heads 4 --heads-kv 2 --batch 2 --seq 777 --seq-k 1500 --causal" "--dhead 64 --heads 4 --heads-kv 1 --batch 2 --seq 1000 --seq-k 1300" \
         "--dhead 256 --heads 2 --heads-kv 1 --batch 2 --seq 900 --seq-k 700 --causal"; do
  for k in wgmma wgmma_wide; do
    timeout 60 "$G/R/runner" --bwd --kernel $k $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception" | sed "s/^/$k: /"
  done
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
{ dc_abn "A R" '^bwd/' \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 8192 --dhead 128 --kernel wgmma" \
  "--seq 8192 --dhead 128 --causal --kernel wgmma" "--seq 8192 --dhead 64 --kernel wgmma"; } > "$O/ab.txt" 2>&1
dc_summary A R "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
