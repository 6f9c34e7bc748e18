#!/usr/bin/env bash
# Session 38, call 3: dense-query paged calls on the dense calls' schedules. A = session 37's
# final build; P = paged calls with dense queries take the persistent walk (full masks) and the
# dynamic schedule (causal, <= 4096 keys) as contiguous ones do (fa3_forward.cuh). Predictions in
# docs/NOTES.md "Session 38". Then the paged and varlen forward tests (two new cases with more
# tiles than SMs, and call 1's two page-32 cases on the TMA path), runner checks and memcheck /
# racecheck on multi-tile CTAs of both schedules.
set -u
source benchmarks/device_call.sh
dc_setup P > /dev/null
DC_BENCH_FLAGS="" dc_abn "A P" '^fwd_(paged|varlen)' \
  "--paged 16,64,256 --batch 4 --seq 4096 --dhead 128 --heads 16 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,256 --batch 8 --seq 2048 --dhead 128 --heads 16 --kernel auto" \
  "--paged 16,256 --batch 8 --seq 2048 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --heads 32 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --heads 32 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" > "$O/ab_paged.txt" 2>&1
dc_summary A P "$O/ab_paged.txt" | tee "$O/ab_summary.txt"
dc_tests '*Paged*:*VarlenForward*' 200 4
dc_runner "--paged 16,256 --batch 3 --seq 700 --dhead 128 --heads 8 --heads-kv 2" \
  "--paged 16,256 --batch 3 --seq 700 --seq-k 1500 --dhead 128 --heads 8 --heads-kv 2 --causal" \
  "--paged 32,128 --batch 4 --seq 1000 --dhead 64 --heads 16 --heads-kv 4 --causal"
dc_sanitize "$B/runner --kernel wgmma_persistent --paged 16,256 --batch 3 --seq 700 --dhead 128 --heads 8 --heads-kv 2" \
  "$B/runner --kernel wgmma_persistent --paged 16 --batch 3 --seq 700 --dhead 128 --heads 8 --heads-kv 2 --causal"
echo "total: $((SECONDS - DC_T0)) s"
