#!/usr/bin/env bash
# Session 40, call 1. A = session 39's final bench (HEAD's kernels); B = HEAD + the row-group
# K/V layout of the paged kernels at hdims 128 / 256 (one TMA box per page at every column block:
# 16 boxes per 128-key tile at page 16, hdim 128, instead of 32), and the paged tests (two new
# padded-page cases: the fallback of one box per 8-row group).
set -u
source benchmarks/device_call.sh
dc_setup B > /dev/null
dc_tests '*Paged*' 150 4 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --batch 2 --seq 333 --dhead 128 --heads 4 --heads-kv 2 --paged 16 --causal" \
  "$B/runner --kernel wgmma_persistent --dhead 256 --heads 2 --heads-kv 1 --varlen 100,300,17 --paged 32"
dc_runner "--batch 2 --seq 500 --dhead 128 --heads 8 --heads-kv 2 --paged 16,32,64,256" \
  "--dhead 256 --heads 4 --heads-kv 2 --varlen 1,128,129,500 --paged 16,256 --causal" \
  "--dhead 128 --heads 4 --varlen 0,9,400,1000 --paged 16,128 --causal"
DC_BENCH_FLAGS="" dc_abn "A B" '^fwd' \
  "--paged 16,32,256 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16,32,256 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 256 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 256 --causal --kernel auto" > "$O/ab.txt" 2>&1
dc_summary A B "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
