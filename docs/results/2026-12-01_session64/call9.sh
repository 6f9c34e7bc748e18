#!/usr/bin/env bash
# Session 64, call 9: S (the dsinks kernel at 1024 threads, four rows in flight) against F (call 4's bench),
# two rotated rounds; then the backward suites on S (the slow ordered / varlen-cap / 50-run ones left out: S
# changes only the dsinks kernel) and the sanitizers on sinks calls. carry [".gpu"] (bundle = S, F/ inside it).
set -u
source benchmarks/device_call.sh
dc_setup S > /dev/null
dc_abn "F S" 'bwd/auto/' \
    "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal --sinks" \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --sinks" \
    "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal" > "$O/ab.txt" 2>&1
dc_summary F S "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-110
dc_tests '*Backward*:*Bwd*:Fuzz*-*OrderedDq*:*over_order_cap*:*FiftyRuns*' 230 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED" "$O/tests.txt" | head -5
grep -c -i "sink" "$O/tests.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 3 --seq 700 --seq-k 900 --heads 6 --heads-kv 2 --dhead 128 --causal --sinks"
echo "total: $((SECONDS - DC_T0)) s"
