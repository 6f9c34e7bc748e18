#!/usr/bin/env bash
# Session 51, call 6 (carry [".gpu"]). F (bundle) = the final tree (HEAD: L's batched page-table
# lookups + hdim 64's wide two-sided windows off the walk; fwd_09 SASS-identical to call 3's L).
# Every forward suite, sanitizers on the new window route, then the README's paged table
# (session 50's call 6 cells), two rounds.
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Concurren*:*Graph*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 240 16
dc_sanitize "$B/runner --kernel auto --batch 2 --seq 2300 --seq-k 2400 --dhead 64 --heads 4 --heads-kv 2 --window 1100,1000" \
  "$B/runner --kernel auto --batch 2 --seq 2400 --seq-k 2300 --dhead 64 --heads 4 --heads-kv 2 --window 1500,700 --paged 64"
DC_BENCH_FLAGS="" dc_abn "F" '^fwd' \
  "--paged 16,32,64,256 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16,32,64,256 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 256 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 256 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 64 --heads 32 --kernel auto" \
  "--varlen --paged 16,256 --dhead 64 --heads 32 --causal --kernel auto" \
  "--seq 4096 --batch 4 --heads 32 --dhead 64 --window 2048,2048 --kernel auto" \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --window 2048,2048 --kernel auto" > "$O/bench.txt" 2>&1
grep -c TFLOPS "$O/bench.txt"
echo "total: $((SECONDS - DC_T0)) s"
