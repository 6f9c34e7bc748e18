#!/usr/bin/env bash
# Session 65, call 4 (call 3's script with K1 / K2): the walk with dK / dV staged in a dS^T buffer and K / V
# released before the copy-out; K2 claims units from a counter, K1 takes them statically. The backward's walk for few-step calls (bwd_03_wgmma_dkv_walk_kernel; taken only
# with FLASH_BWD_WALK set in this build). First its correctness: the backward suites with the walk on
# (every non-deterministic dense call whose CTAs take few steps walks: most test shapes), memcheck and
# racecheck on walked calls; then G (grid) against K (walk; the same binary with FLASH_BWD_WALK=1),
# two rotated rounds. carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup G > /dev/null
export FLASH_BWD_WALK=1
dc_tests '*Backward*:*Bwd*:Concurrency*:Fuzz*-*OrderedDq*:*over_order_cap*:*FiftyRuns*' 150 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED" "$O/tests.txt" | head -8
grep -h -B3 -E "^\[  FAILED" "$O/tests.txt" | head -30
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 2 --seq 700 --seq-k 1000 --heads 4 --heads-kv 2 --dhead 64 --causal --window 128,0" \
  "$B/runner --bwd --kernel wgmma --batch 3 --seq 333 --heads 4 --heads-kv 1 --dhead 128 --window 100,20"
unset FLASH_BWD_WALK
{ dc_abn "G K1 K2" 'bwd/auto/' \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --window 128,0" \
    "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal --window 128,0" \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --window 512,0" \
    "--kernel auto --dhead 64 --seq 512 --batch 32 --heads 32" \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --softcap 30 --window 128,0"
} > "$O/ab.txt" 2>&1
{ dc_summary G K1 "$O/ab.txt"; dc_summary G K2 "$O/ab.txt"; } | tee "$O/ab_summary.txt" | cut -c1-120
echo "total: $((SECONDS - DC_T0)) s"
