#!/usr/bin/env bash
# Session 47, call 1 (carry [".gpu"]). Q = session 46's library with bwd_04's deterministic
# warpgroup 1 staging its dQ half in the step's Q stage (bundle.txz); A = session 46's bench
# (A.txz). Runner on Q (both modes), the determinism and grid backward tests on Q, then A / Q
# rotated, two rounds, hdim 256's four cells (both modes in each bench run).
source benchmarks/device_call.sh
dc_setup Q > /dev/null
for a in "--dhead 256 --heads 2 --batch 2 --seq 600 --causal" "--dhead 256 --heads 2 --heads-kv 1 --batch 2 --seq 900 --seq-k 700" \
         "--dhead 256 --heads 4 --heads-kv 2 --batch 2 --seq 777 --seq-k 1500 --causal" "--dhead 256 --heads 2 --batch 1 --seq 1000 --window 300,0 --causal" \
         "--dhead 256 --heads 2 --batch 2 --seq 700 --causal --softcap 30 --alibi" "--dhead 256 --heads 2 --batch 1 --seq 65" \
         "--dhead 256 --heads 4 --varlen 1,128,129,500 --causal" "--dhead 256 --heads 2 --varlen 0,9,400"; do
  timeout 90 "$B/runner" --bwd --kernel wgmma_wide $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
grep -E "FAIL|rror:|xception" "$O/runner.txt" | head -5
dc_tests 'BackwardDeterminism.*:Grid/BackwardGrid.*:Cases/VarlenBwd.*' 200 8 | tail -8
{ dc_abn "A Q" '^bwd/' \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" \
  "--seq 16384 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide"; } > "$O/ab.txt" 2>&1
dc_summary A Q "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
