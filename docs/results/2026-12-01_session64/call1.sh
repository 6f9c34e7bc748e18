#!/usr/bin/env bash
# Session 64, call 1: H (HEAD, 66a195d), N3 (the mask-free run once per key block, L3), N (L3 + the
# writer's count alone, L2), three rotated tags, two rounds; then the backward suites on N and the
# sanitizers on an 80-row causal and a full call. carry [".gpu"] (bundle = N, with H/ and N3/ inside it).
set -u
source benchmarks/device_call.sh
dc_setup N > /dev/null
{ dc_abn "H N3 N" 'bwd/auto/' \
    "--kernel auto --dhead 128 --seq 8192 --batch 2 --heads 16" "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16" \
    "--kernel auto --dhead 128 --seq 8192 --batch 2 --heads 16 --causal" "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal" \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32" "--kernel auto --dhead 64 --seq 16384 --batch 1 --heads 32 --causal"
  dc_abn "H N3 N" 'det/' "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal"
} > "$O/ab.txt" 2>&1
{ dc_summary H N3 "$O/ab.txt"; dc_summary H N "$O/ab.txt"; } | tee "$O/ab_summary.txt" | cut -c1-110
dc_tests '*Backward*:*Bwd*:Concurrency*:Fuzz*-*OrderedDq*:*over_order_cap*:*FiftyRuns*' 230 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED" "$O/tests.txt" | head -5
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 2 --seq 1500 --heads 4 --heads-kv 2 --dhead 128 --causal" \
  "$B/runner --bwd --kernel wgmma --batch 2 --seq 1000 --seq-k 1333 --heads 4 --dhead 128"
echo "total: $((SECONDS - DC_T0)) s"
