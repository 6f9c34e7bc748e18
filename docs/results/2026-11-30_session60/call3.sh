#!/usr/bin/env bash
# Session 60, call 3 (carry [".gpu"]): bundle.txz holds bin/ (AR's runner and bench), lib/, and
# F/ (HEAD), A/ (exp_A1_wg1_adds_from_registers.patch), R/ (exp_R_relaxed_turn_spin.patch),
# AR/ (both) benches.
# A1: bwd_04 deterministic: warpgroup 1 adds its dQ half from registers (RED.128, STG.128 for the
# tile's first adder) once the writer signals the turn, then fence.release.gpu and an arrival;
# the staging buffer carries warpgroup 0's half only; dQ first in both warpgroups.
# Predicted: deterministic hdim 256 +4-10% (warpgroup 1's 3461-clock wait for the buffer and
# the writer's second 1900-clock bulk read leave the step; the link shortens).
# R: the turn spin with relaxed loads (no CCTL.IVALL a poll), one fence.acquire.gpu after it.
# Predicted: deterministic +0.5-3% in bwd_03 and bwd_04 (one or two L1 invalidations a step fewer).
source benchmarks/device_call.sh
dc_setup AR > /dev/null
for a in "--seq 300 --seq-k 200 --heads 2 --dhead 256 --causal" "--batch 2 --seq 333 --seq-k 517 --heads 4 --heads-kv 2 --dhead 256" \
         "--seq 190 --heads 3 --heads-kv 1 --dhead 256 --window 40,7 --softcap 20"; do
  timeout 60 "$B/runner" --bwd --kernel wgmma_wide $a 2>&1 | grep -E "OK|FAIL|rror" | head -4
done > "$O/runner.txt" 2>&1
echo "runner OK $(grep -c OK "$O/runner.txt") FAIL $(grep -c -E 'FAIL|rror' "$O/runner.txt")"
dc_abn "F A R AR" 'det/' "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --kernel wgmma_wide" \
  "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" > "$O/ab256.txt" 2>&1
for t in A R AR; do dc_summary F $t "$O/ab256.txt"; done | tee "$O/ab_summary.txt"
dc_abn "F R" 'det/' "--seq 8192 --dhead 128 --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma" \
  "--seq 8192 --dhead 64 --kernel wgmma" > "$O/ab03.txt" 2>&1
dc_summary F R "$O/ab03.txt" | tee -a "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
