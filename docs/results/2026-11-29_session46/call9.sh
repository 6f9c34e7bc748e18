#!/usr/bin/env bash
# Session 46, call 9 (carry [".gpu"]). G = the kept tree (F) with causal deterministic backward calls
# in ascending key-block order (BwdParams::det_ascending: each key block adds after the ones below
# it, CTAs walk their query tiles downwards, tile by tile over the GQA group's heads, every (KV
# head, batch) pair interleaved): bundle.txz (bench, runner, test_gpu); F = the kept bench (F.txz).
# Runner (both modes) on G, then F / G rotated, two rounds, then the backward suites on G.
source benchmarks/device_call.sh
dc_setup G > /dev/null
for a in "--dhead 128 --heads 4 --heads-kv 2 --batch 2 --seq 777 --seq-k 1500 --causal" "--dhead 128 --heads 8 --heads-kv 1 --batch 1 --seq 1500 --seq-k 900 --causal" \
         "--dhead 64 --heads 4 --heads-kv 1 --batch 2 --seq 1000 --seq-k 1300 --causal" "--dhead 64 --heads 6 --heads-kv 2 --batch 3 --seq 333 --causal --softcap 30" \
         "--dhead 256 --heads 4 --heads-kv 2 --batch 2 --seq 600 --causal" "--dhead 256 --heads 2 --batch 2 --seq 900 --seq-k 700 --causal --alibi" \
         "--dhead 128 --heads 4 --batch 2 --seq 1000 --causal --window 300,0"; do
  for k in wgmma wgmma_wide; do
    timeout 60 "$B/runner" --bwd --kernel $k $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception" | sed "s/^/$k: /"
    [ "${PIPESTATUS[0]}" = 124 ] && echo "$k: TIMEOUT $a"
  done
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception|TIMEOUT' "$O/runner.txt")"
grep -E "FAIL|rror:|xception|TIMEOUT" "$O/runner.txt" | head -5
{ dc_abn "F G" '^bwd/' "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide"
  dc_abn "F G" 'det/' "--seq 8192 --dhead 128 --causal --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma" \
    "--seq 16384 --dhead 64 --causal --kernel wgmma" "--seq 8192 --dhead 256 --kernel wgmma_wide"; } > "$O/ab.txt" 2>&1
dc_summary F G "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_tests '*Backward*:*Bwd*:Concurrency*' 300 8 | tail -18
echo "total: $((SECONDS - DC_T0)) s"
