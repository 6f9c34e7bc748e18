#!/usr/bin/env bash
# Session 50, call 8 (carry [".gpu"]). R (bundle, the final build) = K + hdim 64's 16-key pages on the
# grid kernel with six stages (call 7's P) + hdim 64 dense-query causal paged calls on the dynamic
# schedule (call 7's Q without its walk). The paged suites, memcheck / racecheck on two hdim 64
# runner calls, then K / R rotated, two rounds, hdim 64 and hdim 128 paged cells.
source benchmarks/device_call.sh
dc_setup R > /dev/null
dc_tests '*Paged*' 150 16
dc_sanitize "$B/runner --kernel auto --dhead 64 --heads 8 --heads-kv 2 --varlen 1,300,129,600,17 --paged 16 --causal" \
  "$B/runner --kernel auto --batch 3 --seq 400 --seq-k 900 --dhead 64 --heads 8 --heads-kv 4 --paged 256 --causal"
DC_BENCH_FLAGS="" dc_abn "K R" '^fwd' \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 64 --heads 32 --kernel auto" \
  "--varlen --paged 16,256 --dhead 64 --heads 32 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" > "$O/kr.txt"
dc_summary K R "$O/kr.txt" | tee "$O/summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
