#!/usr/bin/env bash
# Session 68, call 5: R, the overlapped loop's K / V waits with their phase from the loop's round (no
# run-time i / kStages: Pipeline::consumer_wait_round), against Z (HEAD). Call 2's ncu page had the
# 16-key-page kernel's consumers (three stages) compute i / 3 each step with a wide multiply and four
# more instructions on their way into each K wait (~800 stall samples a step group, dispatch stalls
# at SHF.R.U32.HI); two-stage kernels shift, in uniform registers.
# Predicted (before the call): page 16 at hdim 128 (three stages) +0.5-2%; hdim 64 page 16 (six
# stages) +0.5-2%; hdim 64 causal (the dynamic schedule's three stages) +0-1%; every two- and
# four-stage kernel within +-0.5% (their quotient was a shift).
# Then the forward suites on R, and memcheck / racecheck of the page-16 kernels.
# carry [".gpu"] (bundle = R, Z/bench in Z.txz).
set -u
source benchmarks/device_call.sh
dc_setup R > /dev/null
DC_BENCH_FLAGS="" dc_abn "Z R" 'fwd' \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 16 --dhead 128 --kernel auto --seq 16384 --batch 1 --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --varlen --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --varlen --heads 16 --causal" \
  "--paged 16 --dhead 64 --kernel auto --seq 8192 --batch 2 --heads 32" \
  "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal" \
  "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal" \
  "--kernel auto --dhead 256 --seq 8192 --batch 2 --heads 8" > "$O/ab.txt" 2>&1
dc_summary Z R "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
dc_tests '*Forward*:*PagedPrefill*:FuzzForward*:Concurrency*' 220 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED|rror" "$O/tests.txt" | head -20
dc_sanitize "$B/runner --kernel auto --paged 16 --batch 2 --seq 300 --seq-k 700 --heads 4 --dhead 128" \
  "$B/runner --kernel auto --paged 16 --batch 2 --seq 200 --seq-k 333 --heads 4 --dhead 64 --causal"
echo "total: $((SECONDS - DC_T0)) s"
