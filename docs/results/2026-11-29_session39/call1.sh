#!/usr/bin/env bash
# Session 39, call 1: tile order of the dynamic schedule for full-mask calls. A = the committed
# build (9bdd393); E = A + (1) unmasked packed-query calls take their compact order with the
# query block fastest per (sequence, head) instead of every head fastest; (2) unmasked paged calls
# with packed queries take the dynamic schedule (they lost 2-5% on it in the heads-fastest order,
# session 32); (3) dense full calls of <= 4096 keys take the dynamic schedule instead of the walk
# (diagnostic: the schedule alone). Predictions in docs/NOTES.md "Session 39".
set -u
source benchmarks/device_call.sh
dc_setup A > /dev/null
DC_BENCH_FLAGS="" dc_abn "A E" '^fwd' \
  "--batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--varlen 4096,4096,4096,4096 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --dhead 128 --heads 16 --kernel auto" \
  "--varlen 4096,4096,4096,4096 --dhead 64 --heads 32 --kernel auto" \
  "--varlen --dhead 64 --heads 32 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen 4096,4096,4096,4096 --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--batch 4 --seq 4096 --dhead 64 --kernel auto" > "$O/ab.txt" 2>&1
dc_summary A E "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
