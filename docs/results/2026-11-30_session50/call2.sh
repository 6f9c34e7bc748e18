#!/usr/bin/env bash
# Session 50, call 2 (carry [".gpu"]). E (bundle) = B + the paged single-tile grid at hdim 128 on a
# non-persistent Config with three K/V stages (O staged in Q's buffer; Fa3PagedGridCfgOf). The paged
# and varlen forward suites on E, memcheck / racecheck on two grid calls, then A / B / E rotated, two
# rounds: issue 17's batch (full: the grid; causal: the dynamic schedule, a control) and dense
# queries 4 x 4096 (full: the grid below 128-key pages, the walk at 256).
source benchmarks/device_call.sh
dc_setup E > /dev/null
dc_tests '*PagedPrefill*:*Paged*:VarlenForward*:VarlenOrder*' 200 16
dc_sanitize "$B/runner --kernel auto --batch 2 --seq 700 --seq-k 1000 --dhead 128 --heads 8 --heads-kv 2 --paged 16" \
  "$B/runner --kernel auto --dhead 128 --heads 4 --heads-kv 1 --varlen 1,300,129,600 --paged 32"
V=1374,3778,2225,3022,3204,498,2283
DC_BENCH_FLAGS="" dc_abn "A B E" 'fwd' "--varlen $V --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen $V --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,32,256 --batch 4 --seq 4096 --dhead 128 --kernel auto" > "$O/abe.txt"
{ dc_summary A B "$O/abe.txt"; dc_summary B E "$O/abe.txt"; } | tee "$O/summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
