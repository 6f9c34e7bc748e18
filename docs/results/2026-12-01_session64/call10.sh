#!/usr/bin/env bash
# Session 64, call 10: M (L3's run for the other step loops: bwd_03's 64- / 128-row Configs test their warpgroup's
# 64 keys, bwd_04 its 32, by the run Mask::mask_free_tiles finds once per CTA) against F2 (the tree after call 9),
# two rotated rounds; then every backward suite and the sanitizers on M. carry [".gpu"] (bundle = M, F2/ inside).
set -u
source benchmarks/device_call.sh
dc_setup M > /dev/null
{ dc_abn "F2 M" 'bwd/auto/' \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32" "--kernel auto --dhead 64 --seq 16384 --batch 1 --heads 32 --causal" \
    "--kernel auto --dhead 256 --seq 8192 --batch 2 --heads 8" "--kernel auto --dhead 256 --seq 16384 --batch 1 --heads 8 --causal" \
    "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal --softcap 30"
  dc_abn "F2 M" 'det/' "--kernel auto --dhead 256 --seq 16384 --batch 1 --heads 8 --causal"
} > "$O/ab.txt" 2>&1
dc_summary F2 M "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-110
dc_tests '*Backward*:*Bwd*:Concurrency*:Fuzz*' 230 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED" "$O/tests.txt" | head -5
dc_sanitize "$B/runner --bwd --kernel auto --batch 2 --seq 900 --heads 4 --heads-kv 2 --dhead 256 --causal" \
  "$B/runner --bwd --kernel wgmma --batch 2 --seq 700 --seq-k 900 --heads 4 --dhead 64 --window 200,30"
echo "total: $((SECONDS - DC_T0)) s"
