#!/usr/bin/env bash
# Session 51, call 2 (carry [".gpu"]). P (bundle) = session 50's tree + the 16-key-page kernel
# persistent on the dynamic schedule with O in Q's buffer + FLASH_EXP_W64 (w / g / d: hdim 64
# two-sided windows of >= 2048 keys on the walk / grid / dynamic schedule; host routing only).
# S (S.txz) = session 50's final bench. The paged suites on P, memcheck / racecheck on P's
# page-16 calls (empty sequences, rows without keys), S / P rotated, then the W64 routes.
source benchmarks/device_call.sh
dc_setup P > /dev/null
for t in w g d; do
  mkdir -p "$G/P$t"
  printf '#!/bin/sh\nFLASH_EXP_W64=%s exec %s "$@"\n' "$t" "$B/bench" > "$G/P$t/bench"
  chmod +x "$G/P$t/bench"
done
dc_tests '*Paged*' 150 16
dc_sanitize "$B/runner --kernel auto --dhead 128 --heads 8 --heads-kv 2 --varlen 0,300,129,600,17,0 --paged 16 --causal" \
  "$B/runner --kernel auto --dhead 64 --heads 6 --heads-kv 2 --varlen 1,0,300,129,700 --paged 16" \
  "$B/runner --kernel auto --batch 2 --seq 900 --seq-k 300 --dhead 128 --heads 4 --heads-kv 4 --paged 16 --causal"
DC_BENCH_FLAGS="" dc_abn "S P" '^fwd' \
  "--varlen --paged 16 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--varlen --paged 16 --dhead 64 --heads 32 --kernel auto" \
  "--varlen --paged 16 --dhead 64 --heads 32 --causal --kernel auto" > "$O/sp.txt"
dc_summary S P "$O/sp.txt" | tee "$O/sp_summary.txt"
DC_BENCH_FLAGS="" dc_abn "Pw Pg Pd" '^fwd/' \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --window 2048,2048 --kernel auto" \
  "--seq 4096 --batch 4 --heads 32 --dhead 64 --window 2048,2048 --kernel auto" \
  "--seq 2048 --batch 8 --heads 32 --dhead 64 --window 2048,2048 --kernel auto" \
  "--seq 16384 --batch 1 --heads 32 --dhead 64 --window 2048,2048 --kernel auto" \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --window 1024,1024 --kernel auto" > "$O/w64.txt"
{ dc_summary Pw Pg "$O/w64.txt"; dc_summary Pw Pd "$O/w64.txt"; } | tee "$O/w64_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
