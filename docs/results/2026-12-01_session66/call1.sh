#!/usr/bin/env bash
# Session 66, call 1 (session 65's next_call1.sh): tags H (HEAD), P (+ P4b, the preprocess's rows
# addressed once), B (+ B1, the compact varlen backward grid), C (P + B, the bundle: its test_gpu runs
# the backward suites). A/B two rotated rounds; the backward suites in 16 shards; sanitizers on a
# varlen-free window call and C's runner checks of varlen backward calls; the GEMM ceiling.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup C > /dev/null
python3 docs/results/2026-12-01_session66/gemm_ceiling.py 2>&1 | tee "$O/gemm.txt"
{ dc_abn "H P B C" 'bwd/auto/' \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --window 128,0" \
    "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal --window 128,0" \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32" \
    "--kernel auto --dhead 128 --seq 8192 --batch 2 --heads 16 --causal"
  dc_abn "H P B C" 'bwd_varlen/wgmma/' "--varlen --dhead 128 --heads 16 --causal" "--varlen --dhead 128 --heads 16"
} > "$O/ab.txt" 2>&1
for t in P B C; do dc_summary H $t "$O/ab.txt"; done | tee "$O/ab_summary.txt" | cut -c1-130
dc_tests '*Backward*:*Bwd*:Concurrency*:Fuzz*' 330 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED" "$O/tests.txt" | head -5
grep -h -E "^\[       OK \].*(Fifty|Bitwise|Identical)" "$O/tests.txt" | head -5
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 2 --seq 700 --seq-k 1000 --heads 4 --heads-kv 2 --dhead 64 --causal --window 128,0" \
  "$B/test_gpu --gtest_filter=*VarlenBwd.*bf16_tile_edges_80*:*VarlenBwd.*bf16_tile_edges_causal_l100*"
echo "total: $((SECONDS - DC_T0)) s"
