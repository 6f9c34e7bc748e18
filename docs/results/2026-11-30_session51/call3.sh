#!/usr/bin/env bash
# Session 51, call 3 (carry [".gpu"]). L (bundle) = session 50's tree + page-table lookups a batch
# ahead (produce_paged) + FLASH_EXP_W64 (w: today's walk rule; d: hdim 64 two-sided windows of >= 2048
# keys off the walk unless they cover every key; a: every bounded hdim 64 window of fwd_09 off it).
# S (S.txz) = session 50's final bench. The paged suites on L, sanitizers on L's paged calls
# (hdim 256's 5- and 10-box tiles included), S / L rotated, then the W64 routes.
source benchmarks/device_call.sh
dc_setup L > /dev/null
for t in w d a; do
  mkdir -p "$G/L$t"
  printf '#!/bin/sh\nFLASH_EXP_W64=%s exec %s "$@"\n' "$t" "$B/bench" > "$G/L$t/bench"
  chmod +x "$G/L$t/bench"
done
dc_tests '*Paged*' 150 16
dc_sanitize "$B/runner --kernel auto --dhead 128 --heads 8 --heads-kv 2 --varlen 0,300,129,600,17,1000 --paged 16 --causal" \
  "$B/runner --kernel auto --dhead 256 --heads 4 --heads-kv 2 --varlen 1,300,129,700 --paged 16" \
  "$B/runner --kernel auto --batch 2 --seq 500 --seq-k 1900 --dhead 64 --heads 4 --heads-kv 2 --paged 32 --causal"
DC_BENCH_FLAGS="" dc_abn "S L" '^fwd' \
  "--varlen --paged 16 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,32,256 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16,32 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--varlen --paged 16 --dhead 64 --heads 32 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 256 --heads 8 --kernel auto" > "$O/sl.txt"
dc_summary S L "$O/sl.txt" | tee "$O/sl_summary.txt"
DC_BENCH_FLAGS="" dc_abn "Lw Ld La" '^fwd/' \
  "--seq 4096 --batch 4 --heads 32 --dhead 64 --window 2048,2048 --kernel auto" \
  "--seq 4096 --batch 4 --heads 32 --dhead 64 --window 512,512 --kernel auto" \
  "--seq 4096 --batch 4 --heads 32 --dhead 64 --window 1024,0 --kernel auto" \
  "--seq 4096 --batch 4 --heads 32 --dhead 64 --window 1024,0 --causal --kernel auto" \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --window 1024,0 --causal --kernel auto" \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --window 2048,2048 --kernel auto" \
  "--seq 2048 --batch 8 --heads 32 --dhead 64 --window 2048,2048 --kernel auto" > "$O/w64.txt"
echo "total: $((SECONDS - DC_T0)) s"
