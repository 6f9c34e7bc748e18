#!/usr/bin/env bash
# Prepared in session 65 for the next session's first call (not run). Tags: H (HEAD), P (HEAD +
# next_P4b_preprocess_rows_addressed_once.patch), B (HEAD + next_B1_compact_varlen_grid.patch, which orders each
# sequence's KV heads fastest, so it subsumes next_B2_varlen_head_groups.patch up to 128 sequences), C (P + B, the
# bundle: its test_gpu runs the backward suites). Build each with `ninja -C build-gpu bin/bench`, copy its
# bench to .gpu/TAG/bench inside the bundle tar (pack as session 65's calls did). Predictions in docs/NOTES.md
# "Session 65" (call 6: P4b; B2). carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup C > /dev/null
{ dc_abn "H P B C" 'bwd/auto/' \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --window 128,0" \
    "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal --window 128,0" \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32" \
    "--kernel auto --dhead 128 --seq 8192 --batch 2 --heads 16 --causal"
  dc_abn "H P B C" 'bwd_varlen/wgmma/' "--varlen --dhead 128 --heads 16 --causal" "--varlen --dhead 128 --heads 16"
} > "$O/ab.txt" 2>&1
for t in P B C; do dc_summary H $t "$O/ab.txt"; done | tee "$O/ab_summary.txt" | cut -c1-120
dc_tests '*Backward*:*Bwd*:Concurrency*:Fuzz*' 330 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED" "$O/tests.txt" | head -5
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 2 --seq 700 --seq-k 1000 --heads 4 --heads-kv 2 --dhead 64 --causal --window 128,0"
echo "total: $((SECONDS - DC_T0)) s"
