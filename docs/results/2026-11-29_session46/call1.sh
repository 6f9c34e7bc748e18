#!/usr/bin/env bash
# Session 46, call 1 (carry [".gpu"]). P = session 45's library with bwd_03 / bwd_04 rebuilt (the dP
# wait pinned after the exponentials, wgmma_wait_after_all): bundle.txz (bench, runner, test_gpu);
# A = session 45's bench (A.txz). Runner checks on P's backward variants, then A / P rotated, two
# rounds, issue 18's cells.
source benchmarks/device_call.sh
dc_setup P > /dev/null
for a in "--dhead 128 --heads 4 --heads-kv 2 --batch 2 --seq 777 --seq-k 1500 --causal" "--dhead 128 --heads 4 --batch 2 --seq 1000" \
         "--dhead 64 --heads 4 --heads-kv 1 --batch 2 --seq 1000 --seq-k 1300 --causal" "--dhead 64 --heads 4 --batch 1 --seq 2000" \
         "--dhead 256 --heads 2 --batch 2 --seq 600 --causal" "--dhead 256 --heads 2 --heads-kv 1 --batch 2 --seq 900 --seq-k 700" \
         "--dhead 128 --heads 4 --batch 2 --seq 700 --causal --softcap 30 --alibi" "--dhead 128 --heads 4 --batch 2 --seq 1000 --window 300,0 --causal"; do
  for k in wgmma wgmma_wide; do
    timeout 90 "$B/runner" --bwd --kernel $k $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception" | sed "s/^/$k: /"
  done
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
grep -E "FAIL|rror:|xception" "$O/runner.txt" | head -5
dc_abn "A P" '^bwd/' \
  "--seq 8192 --dhead 128 --kernel wgmma" "--seq 8192 --dhead 128 --causal --kernel wgmma" \
  "--seq 16384 --dhead 128 --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma" \
  "--seq 8192 --dhead 64 --kernel wgmma" "--seq 16384 --dhead 64 --causal --kernel wgmma" \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" > "$O/ab.txt" 2>&1
dc_summary A P "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
