#!/usr/bin/env bash
# Session 50, call 3 (carry [".gpu"]). F (bundle) = B + paged calls on 16-key pages at hdim 128, any
# mask, on the single-tile grid with three K/V stages (Fa3SmallPageCfgOf; causal ones left the dynamic
# schedule). E (call 2) had three stages for every grid call (page 32 -1.5%). Tests and sanitizers on
# F, then B / E / F rotated, two rounds.
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_tests '*PagedPrefill*:*Paged*:*VarlenForward*:VarlenOrder*' 200 16
dc_sanitize "$B/runner --kernel auto --dhead 128 --heads 8 --heads-kv 2 --varlen 1,300,129,600,17 --paged 16 --causal" \
  "$B/runner --kernel auto --batch 2 --seq 333 --seq-k 1000 --dhead 128 --heads 4 --heads-kv 4 --paged 16 --window 100,20"
V=1374,3778,2225,3022,3204,498,2283
DC_BENCH_FLAGS="" dc_abn "B E F" 'fwd' "--varlen $V --paged 16,32,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen $V --paged 16,32 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,32 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16,32 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" > "$O/bef.txt"
{ dc_summary B E "$O/bef.txt"; dc_summary B F "$O/bef.txt"; } | tee "$O/summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
