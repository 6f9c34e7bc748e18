#!/usr/bin/env bash
# Session 40, call 2. A = session 39's final bench; B = the row-group layout without the
# producers' spills (the V fix by byte offset; the candidate); W = B + dense-query full paged
# calls at hdim 128 on the persistent walk (the single-tile grid in B; the walk lost 1-4% in
# session 39 with two boxes per page and column block).
set -u
source benchmarks/device_call.sh
dc_setup B > /dev/null
dc_tests '*Paged*' 150 4 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --heads 8 --heads-kv 2 --varlen 1,300,129,700 --paged 16 --causal" \
  "$B/runner --kernel wgmma_persistent --batch 2 --seq 300 --dhead 256 --heads 2 --paged 16"
DC_BENCH_FLAGS="" dc_abn "A B W" '^fwd' \
  "--paged 16,32,256 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16,256 --batch 8 --seq 2048 --dhead 128 --kernel auto" > "$O/ab.txt" 2>&1
DC_BENCH_FLAGS="" dc_abn "A B" '^fwd' \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 256 --causal --kernel auto" >> "$O/ab.txt" 2>&1
dc_summary A B "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_summary B W "$O/ab.txt" | tee -a "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
