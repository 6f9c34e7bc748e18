#!/usr/bin/env bash
# Session 68, call 7: P, the paged grid's producer fetching Q of tile blockIdx + sm_count into L2 once
# its own loads are issued (dense queries), against R (call 5's kept tree). Call 6's ncu page: R's
# 16-key-page consumers' first wait (Q) holds 1.7% of their samples (contiguous walk: 0.2%).
# Predicted (before the call): dense-query page 16 +0.5-1.5% (8 x 2048, more CTA starts a call: the
# top of the range), packed-query page 16 (issue 17's batch, no prefetch) 0, page 256 / contiguous
# (the walk) 0. Session 42 tried the same for hdim 256's grid (no gain, causal 512 -4.2%).
# Then the paged suites on P and memcheck / racecheck of a page-16 call.
# carry [".gpu"] (bundle = P, R/bench in R.txz).
set -u
source benchmarks/device_call.sh
dc_setup P > /dev/null
DC_BENCH_FLAGS="" dc_abn "R P" 'fwd' \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 16 --dhead 128 --kernel auto --seq 2048 --batch 8 --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --seq 16384 --batch 1 --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --varlen --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --varlen --heads 16 --causal" > "$O/ab.txt" 2>&1
dc_summary R P "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
dc_tests '*PagedPrefill*:*VarlenForward*' 150 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED|rror" "$O/tests.txt" | head -20
dc_sanitize "$B/runner --kernel auto --paged 16 --batch 3 --seq 300 --seq-k 700 --heads 4 --dhead 128"
echo "total: $((SECONDS - DC_T0)) s"
