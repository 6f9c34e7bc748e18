#!/usr/bin/env bash
# Session 38, call 1: paged prefill with small pages gathered by cp.async. A = session 37's final
# build (bd0b71b); G = paged calls whose TMA boxes would be under 64 rows (pages of 16 and 32 at
# hdims 64 / 128, every page size at hdim 256, whose 80-key tiles take 16-row boxes) filled by the
# producer warpgroup's 128 threads with cp.async into the swizzled tile, each thread arriving on
# the full barrier (cp.async.mbarrier.arrive.noinc), the consumers fencing the async proxy after
# each wait (fa3_forward.cuh gather_paged). Predictions in docs/NOTES.md "Session 38".
# Then the paged and varlen forward tests, memcheck / racecheck on gathered runner calls.
set -u
source benchmarks/device_call.sh
dc_setup G > /dev/null
DC_BENCH_FLAGS="" dc_abn "A G" '^fwd_(paged|varlen)' \
  "--paged 16,32,64,256 --batch 4 --seq 4096 --dhead 128 --heads 16 --kernel auto" \
  "--paged 16,32,256 --batch 4 --seq 4096 --dhead 128 --heads 16 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,256 --batch 2 --seq 8192 --dhead 64 --heads 32 --causal --kernel auto" \
  "--paged 16,256 --batch 2 --seq 8192 --dhead 256 --heads 8 --kernel auto" \
  "--paged 16,256 --batch 2 --seq 8192 --dhead 256 --heads 8 --causal --kernel auto" > "$O/ab_paged.txt" 2>&1
dc_summary A G "$O/ab_paged.txt" | tee "$O/ab_summary.txt"
dc_tests '*Paged*:*VarlenForward*' 200 4
dc_sanitize "$B/runner --kernel wgmma_persistent --paged 16,32,256 --seq 300 --seq-k 777 --dhead 128 --heads 4 --heads-kv 2 --causal" \
  "$B/runner --kernel wgmma_persistent --paged 16 --varlen 1,128,129,500 --dhead 64 --heads 2" \
  "$B/runner --kernel wgmma_persistent --paged 32 --seq 200 --seq-k 333 --dhead 256 --heads 2"
echo "total: $((SECONDS - DC_T0)) s"
