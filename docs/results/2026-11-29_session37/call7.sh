#!/usr/bin/env bash
# Session 37, call 7: paged prefill. F = the tree of call 5 (the forward as at a399617); P = the
# paged producer loads K one tile ahead of V (K(i + 1) before V(i), the consumers' order) with
# each tile's page entries looked up a tile ahead (fa3_forward.cuh produce_paged; only the 16
# paged kernels' SASS changed). Predictions in docs/NOTES.md "Session 37". Then the paged and
# varlen forward tests, memcheck / racecheck on paged runner calls.
set -u
source benchmarks/device_call.sh
dc_setup P > /dev/null
DC_BENCH_FLAGS="" dc_abn "F P" '^fwd_(paged|varlen)' \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --heads 16 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --heads 16 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16 --batch 2 --seq 8192 --dhead 64 --heads 32 --causal --kernel auto" > "$O/ab_paged.txt" 2>&1
dc_summary F P "$O/ab_paged.txt" | tee "$O/ab_summary.txt"
dc_tests '*Paged*:*VarlenForward*' 200 4
dc_sanitize "$B/runner --kernel wgmma_persistent --paged 16,256 --seq 300 --seq-k 777 --dhead 128 --heads 4 --heads-kv 2 --causal" \
  "$B/runner --kernel wgmma_persistent --paged 16 --varlen 1,128,129,500 --dhead 64 --heads 2"
echo "total: $((SECONDS - DC_T0)) s"
