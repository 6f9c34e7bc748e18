#!/usr/bin/env bash
# Session 39, call 3 (diagnostics, K's library; P = K's bench with FLASH_BENCH_PAGES_IN_ORDER,
# which hands out the pool's pages in order instead of shuffled). (a) paged calls with their
# pages in order against shuffled, beside the contiguous cache: is issue 17's page-256 gap the
# scatter or the code path? (b) issue 17's causal batch with its sequences longest first against
# FA4's order: would a longest-sequence-first order shorten the tail? (c) ncu of the causal
# packed kernel, contiguous against page 256 (same schedule and order).
set -u
source benchmarks/device_call.sh
dc_setup K > /dev/null
P=$G/P/bench
for r in 1 2; do
  for cell in "--varlen --paged 16,256 --dhead 128 --heads 16 --causal" "--paged 16,256 --batch 4 --seq 4096 --dhead 128" \
              "--varlen --paged 16,256 --dhead 128 --heads 16" "--paged 16,256 --batch 4 --seq 4096 --dhead 64"; do
    for order in shuffled in_order; do
      if [ $order = in_order ]; then export FLASH_BENCH_PAGES_IN_ORDER=1; else unset FLASH_BENCH_PAGES_IN_ORDER; fi
      timeout 60 "$P" $cell --kernel auto --benchmark_filter='^fwd' 2>&1 | grep -E "^fwd|rror" |
        sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$order /"
    done
  done
done > "$O/pages_order.txt" 2>&1
unset FLASH_BENCH_PAGES_IN_ORDER
for r in 1 2; do
  for d in 128 64; do
    for lens in "1374,3778,2225,3022,3204,498,2283" "3778,3204,3022,2283,2225,1374,498"; do
      timeout 60 "$B/bench" --varlen $lens --dhead $d --heads $((2048 / d)) --causal --kernel auto --benchmark_filter='^fwd_varlen/' 2>&1 |
        grep -E "^fwd|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$lens /"
    done
  done
done > "$O/seq_order.txt" 2>&1
cat "$O/pages_order.txt" "$O/seq_order.txt"
for f in 'fwd_varlen/' 'fwd_varlen_paged256/'; do
  timeout 150 ncu -k regex:fwd_09 --launch-skip 3 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section LaunchStats \
    "$B/bench" --varlen --paged 256 --dhead 128 --heads 16 --causal --kernel auto --min-time 0.01 --benchmark_filter="^$f" \
    > "$O/ncu_$(echo $f | tr -d /).txt" 2>&1
  echo "ncu $f rc=$?"
done
echo "total: $((SECONDS - DC_T0)) s"
