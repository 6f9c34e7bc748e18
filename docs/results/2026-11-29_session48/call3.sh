#!/usr/bin/env bash
# Session 48, call 3 (carry [".gpu"]). E = Z with the dQ convert started early (programmatic
# dependent launch, each tile once its KV head's key blocks are done) in deterministic calls too
# (E.txz: bench, runner); Z = call 1's build (bundle.txz). Runner on E,
# then Z / E rotated, two rounds, both modes in each bench run.
source benchmarks/device_call.sh
dc_setup Z > /dev/null
for a in "--dhead 256 --heads 2 --batch 2 --seq 600 --seq-k 300 --causal" "--dhead 128 --heads 4 --heads-kv 2 --batch 2 --seq 900 --seq-k 700" \
         "--dhead 64 --heads 4 --heads-kv 1 --batch 2 --seq 777 --seq-k 300 --window 30,10" "--dhead 256 --heads 2 --batch 1 --seq 1000"; do
  timeout 90 "$G/E/runner" --bwd --kernel auto $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
{ dc_abn "Z E" '^bwd/' \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" \
  "--seq 16384 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" \
  "--seq 8192 --dhead 128 --kernel wgmma" "--seq 8192 --dhead 128 --causal --kernel wgmma"; } > "$O/ab.txt" 2>&1

dc_summary Z E "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
