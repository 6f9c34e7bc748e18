#!/usr/bin/env bash
# Session 46, call 4 (carry [".gpu"]). F = the kept tree's bwd_04 (D: the deterministic dP wait
# pinned) in session 45's library: bundle.txz (bench, runner, test_gpu); E1 / E2 = F with both /
# neither warpgroup computing dQ last in deterministic mode (E.txz, benches). Runner and
# sanitizers on F's wgmma_wide (both modes), then F / E1 / E2 rotated, two rounds, deterministic
# hdim 256 cells.
source benchmarks/device_call.sh
dc_setup F > /dev/null
for a in "--dhead 256 --heads 2 --batch 2 --seq 600 --causal" "--dhead 256 --heads 4 --heads-kv 1 --batch 2 --seq 900 --seq-k 700" \
         "--dhead 256 --heads 2 --batch 1 --seq 1500 --seq-k 1100 --causal --softcap 30 --alibi" "--dhead 256 --heads 2 --batch 2 --seq 1000 --window 200,50" \
         "--dhead 256 --heads 2 --batch 1 --seq 333 --seq-k 517 --sinks"; do
  timeout 120 "$B/runner" --bwd --kernel wgmma_wide $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
grep -E "FAIL|rror:|xception" "$O/runner.txt" | head -5
dc_sanitize "$B/runner --bwd --kernel wgmma_wide --dhead 256 --heads 4 --heads-kv 2 --batch 1 --seq 300 --seq-k 333 --causal" \
            "$B/runner --bwd --kernel wgmma_wide --dhead 256 --heads 2 --batch 1 --seq 200 --seq-k 150"
dc_abn "F E1 E2" 'det/' \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" \
  "--seq 16384 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" > "$O/ab.txt" 2>&1
{ dc_summary F E1 "$O/ab.txt"; dc_summary F E2 "$O/ab.txt"; } | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
