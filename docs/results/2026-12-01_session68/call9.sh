#!/usr/bin/env bash
# Session 68, call 9: M, the four tensor maps fetched at each CTA's very start (before the barriers'
# init and the dependent-launch wait) instead of by the producer after them, against R (HEAD). The
# grid kernels start a CTA a tile; call 6's page had R's 16-key-page consumers waiting 1.7% of their
# samples for Q at those starts, and call 7 showed it is not Q's HBM latency.
# Predicted (before the call): page 16 (grid) +0.3-1%, 8 x 2048 (16 steps a CTA) at the top; the
# single-tile grids of hdim 256 and of causal hdim 128 past 8k keys +0-0.5%; the walk and the dynamic
# schedule (a start a CTA) 0.
# Then the forward and paged suites on M, and memcheck / racecheck of a page-16 call.
# carry [".gpu"] (bundle = M, R/bench in R.txz).
set -u
source benchmarks/device_call.sh
dc_setup M > /dev/null
DC_BENCH_FLAGS="" dc_abn "R M" 'fwd' \
  "--paged 16 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 16 --dhead 128 --kernel auto --seq 2048 --batch 8 --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --varlen --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --varlen --heads 16 --causal" \
  "--kernel auto --dhead 256 --seq 4096 --batch 2 --heads 8" \
  "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal" > "$O/ab.txt" 2>&1
dc_summary R M "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
dc_tests '*Forward*:*PagedPrefill*:FuzzForward*:Concurrency*' 220 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED|rror" "$O/tests.txt" | head -20
dc_sanitize "$B/runner --kernel auto --paged 16 --batch 3 --seq 300 --seq-k 700 --heads 4 --dhead 128"
echo "total: $((SECONDS - DC_T0)) s"
