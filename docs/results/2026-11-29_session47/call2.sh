#!/usr/bin/env bash
# Session 47, call 2 (carry [".gpu"]). Q2 = Q (call 1) + dO loaded by a producer thread of its
# own (bundle.txz); D = session 46's bwd_04 + that split alone (D.txz); A = session 46 (A.txz).
# Runner on Q2, the determinism suite on Q2, then A / Q2 / D rotated, two rounds, hdim 256's
# deterministic cells.
source benchmarks/device_call.sh
dc_setup Q2 > /dev/null
for a in "--dhead 256 --heads 2 --batch 2 --seq 600 --causal" "--dhead 256 --heads 2 --heads-kv 1 --batch 2 --seq 900 --seq-k 700" \
         "--dhead 256 --heads 4 --heads-kv 2 --batch 2 --seq 777 --seq-k 1500 --causal" "--dhead 256 --heads 2 --batch 1 --seq 1000 --window 300,0 --causal" \
         "--dhead 256 --heads 2 --batch 2 --seq 700 --causal --softcap 30 --alibi" "--dhead 256 --heads 4 --varlen 1,128,129,500 --causal"; do
  timeout 90 "$B/runner" --bwd --kernel wgmma_wide $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
dc_tests 'BackwardDeterminism.*' 120 4 | tail -3
{ dc_abn "A Q2 D" '^bwd/.*det' \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" \
  "--seq 16384 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide"; } > "$O/ab.txt" 2>&1
dc_summary A Q2 "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_summary A D "$O/ab.txt" | tee -a "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
