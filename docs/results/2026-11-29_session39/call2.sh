#!/usr/bin/env bash
# Session 39, call 2. K = the committed build (bd2a3e6: call 1's order kept); X = K + (8) the
# dynamic schedule's producer claims its next tile before loading the current one (the atomic's
# latency off the path between two tiles); (16) the paged producer looks up a tile's first pages
# before it waits to load Q; (4, diagnostic) dense full calls of <= 4096 keys on the dynamic
# schedule. Predictions in docs/NOTES.md "Session 39". Then the forward GPU suites on K,
# memcheck / racecheck on a varlen call and a paged one.
set -u
source benchmarks/device_call.sh
dc_setup K > /dev/null
DC_BENCH_FLAGS="" dc_abn "K X" '^fwd' \
  "--batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--batch 8 --seq 2048 --dhead 128 --causal --kernel auto" \
  "--batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--batch 4 --seq 4096 --dhead 64 --causal --kernel auto" \
  "--varlen 4096,4096,4096,4096 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --dhead 128 --heads 16 --kernel auto" \
  "--varlen --dhead 128 --heads 16 --causal --kernel auto" \
  "--varlen --dhead 64 --heads 32 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" > "$O/ab.txt" 2>&1
dc_summary K X "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Concurren*:*Graph*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 200 8
dc_sanitize "$B/runner --kernel wgmma_persistent --varlen 1,128,129,500,0,77,1000,33,260 --dhead 128 --heads 6 --heads-kv 2" \
  "$B/runner --kernel wgmma_persistent --varlen 700,1,300,129 --paged 16 --dhead 64 --heads 4 --heads-kv 2 --causal"
echo "total: $((SECONDS - DC_T0)) s"
