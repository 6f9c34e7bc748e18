#!/usr/bin/env bash
# Session 40, call 3: the final build F (the row-group layout of call 2's B, dense-query full
# paged calls at hdim 128 on the walk at pages >= 128; fwd_09 SASS-identical to call 2's W, the
# other TUs to B). The forward suites (two new paged cases: the walk, full and a narrow window),
# the sanitizers on the walk and row-group paths, and the paged table for the README.
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Concurren*:*Graph*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 200 8 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --batch 3 --seq 700 --dhead 128 --heads 8 --heads-kv 2 --paged 256" \
  "$B/runner --kernel wgmma_persistent --batch 2 --seq 600 --dhead 128 --heads 4 --heads-kv 2 --paged 128 --window 200,0 --causal"
DC_BENCH_FLAGS="" dc_abn "F" '^fwd' \
  "--paged 16,32,64,256 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16,32,64,256 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 256 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 256 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --causal --kernel auto" > "$O/bench.txt" 2>&1
grep -E "^F " "$O/bench.txt" | head -3
echo "total: $((SECONDS - DC_T0)) s"
