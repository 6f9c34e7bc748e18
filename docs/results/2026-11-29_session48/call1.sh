#!/usr/bin/env bash
# Session 48, call 1 (carry [".gpu"]). Z = session 46's library with the deterministic dQ's first
# adder storing and the preprocess zeroing only rows that see no key (bundle.txz); A = session 46's
# bench (A.txz). Runner on Z (`auto`, both modes, masks with rows that see no key), the backward
# edge / determinism / grid / varlen tests, memcheck and racecheck of two deterministic runner
# calls, then A / Z rotated, two rounds (both modes in each bench run).
source benchmarks/device_call.sh
dc_setup Z > /dev/null
for a in "--dhead 256 --heads 2 --batch 2 --seq 600 --seq-k 300 --causal" "--dhead 128 --heads 4 --heads-kv 2 --batch 2 --seq 900 --seq-k 700" \
         "--dhead 64 --heads 4 --heads-kv 1 --batch 2 --seq 777 --seq-k 300 --window 30,10" "--dhead 128 --heads 2 --batch 1 --seq 1000 --window 300,0 --causal" \
         "--dhead 256 --heads 2 --batch 2 --seq 700 --causal --softcap 30 --alibi" "--dhead 128 --heads 2 --batch 1 --seq 65" \
         "--dhead 64 --heads 2 --batch 3 --seq 333 --seq-k 190 --causal"; do
  timeout 90 "$B/runner" --bwd --kernel auto $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
grep -E "FAIL|rror:|xception" "$O/runner.txt" | head -5
dc_tests 'BackwardEdges.*:BackwardDeterminism.*:Grid/BackwardGrid.*:Cases/VarlenBwd.*' 200 8 | tail -10
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 2 --seq 700 --seq-k 333 --heads 4 --heads-kv 2 --dhead 128 --causal" \
            "$B/runner --bwd --kernel wgmma_wide --batch 1 --seq 500 --seq-k 200 --heads 2 --dhead 256 --window 30,10"
{ dc_abn "A Z" '^bwd/' \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" \
  "--seq 16384 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" \
  "--seq 8192 --dhead 128 --kernel wgmma"; } > "$O/ab.txt" 2>&1
dc_summary A Z "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
