#!/usr/bin/env bash
# Session 56, call 10 (carry [".gpu"]): F = the bundle: fwd_10's small walking tiles take narrow
# windows on paged caches too (dense queries, span <= 384 at hdim 128 / 512 at hdim 64; kPagedKV in
# WgmmaWindowConfig; its paged producers keep 24 registers: 64 / 48 bytes of stack), and a hdim 64
# page-16 window PagedPrefill case; K9 = call 9's tree (those calls on fwd_09's walk, 128 / 192-row
# tiles). A / B, then the paged suites and both sanitizers on the new kernels.
source benchmarks/device_call.sh
dc_setup F > /dev/null
DC_BENCH_FLAGS="" dc_abn "K9 F" '^fwd_paged' \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --causal --window 128,0 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --window 64,63 --kernel auto" \
  "--paged 16,256 --batch 2 --seq 8192 --heads 32 --dhead 64 --causal --window 128,0 --kernel auto" \
  "--paged 32 --batch 2 --seq 8192 --heads 32 --dhead 64 --causal --window 383,0 --kernel auto" > "$O/ab.txt"
dc_summary K9 F "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_tests 'PagedPrefill*:*/PagedPrefill*' 200 8 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure" "$O/tests.txt" | head -20
rm -f "$O/tests.txt"
dc_sanitize "$B/runner --kernel wgmma_window --paged 16,64 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 128 --causal --window 128,0" \
  "$B/runner --kernel wgmma_window --paged 16,256 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 64 --window 100,27"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
