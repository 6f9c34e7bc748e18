#!/usr/bin/env bash
# Session 38, call 4: programmatic dependent launch for the Hopper forward. A = session 37's final
# build; Q = fa3_launch launches with programmatic stream serialization, the kernel waits for the
# previous one after its barrier setup and lets the next one start, the varlen check triggers at
# its start (fa3_forward.cuh, varlen.cu). Predictions in docs/NOTES.md "Session 38". Then the
# forward, varlen, paged, window, score, concurrency and graph suites on Q, memcheck / racecheck.
set -u
source benchmarks/device_call.sh
dc_setup Q > /dev/null
DC_BENCH_FLAGS="" dc_abn "A Q" '^fwd' \
  "--seq 512,1024,2048,8192 --dhead 128 --kernel auto" \
  "--seq 512,2048 --dhead 128 --causal --kernel auto" \
  "--seq 512,2048 --dhead 64 --kernel auto" \
  "--seq 1024 --dhead 256 --kernel auto" \
  "--varlen --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" > "$O/ab_fwd.txt" 2>&1
dc_summary A Q "$O/ab_fwd.txt" | tee "$O/ab_summary.txt"
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Concurren*:*Graph*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 230 8
dc_sanitize "$B/runner --kernel wgmma_persistent --batch 2 --seq 700 --seq-k 1333 --dhead 128 --heads 8 --heads-kv 2 --causal" \
  "$B/runner --kernel wgmma_persistent --paged 16 --varlen 1,128,129,500 --dhead 64 --heads 2"
echo "total: $((SECONDS - DC_T0)) s"
