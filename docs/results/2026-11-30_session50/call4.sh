#!/usr/bin/env bash
# Session 50, call 4 (carry [".gpu"]). G = F + the small-page kernel on the compact grid for causal
# packed calls (Fa3VarlenTileScheduler); H (bundle) = G + unmasked packed paged calls on pages of
# >= 128 keys on the dynamic schedule (call 1's C: hdim 64 page 256 +3.9%). Tests and sanitizers on
# H, then F / G / H rotated, two rounds.
source benchmarks/device_call.sh
dc_setup H > /dev/null
dc_tests '*PagedPrefill*:*Paged*:*VarlenForward*:VarlenOrder*' 200 16
dc_sanitize "$B/runner --kernel auto --dhead 64 --heads 8 --heads-kv 2 --varlen 1,300,129,600,17 --paged 256" \
  "$B/runner --kernel auto --dhead 128 --heads 4 --heads-kv 1 --varlen 700,3,129,1000 --paged 16 --causal"
V=1374,3778,2225,3022,3204,498,2283
DC_BENCH_FLAGS="" dc_abn "F G H" 'fwd' "--varlen $V --paged 16 --dhead 128 --heads 16 --causal --kernel auto" \
  "--varlen $V --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen $V --paged 16,256 --dhead 64 --heads 32 --kernel auto" > "$O/fgh.txt"
{ dc_summary F G "$O/fgh.txt"; dc_summary G H "$O/fgh.txt"; } | tee "$O/summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
