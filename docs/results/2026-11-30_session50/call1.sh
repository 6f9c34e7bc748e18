#!/usr/bin/env bash
# Session 50, call 1 (carry [".gpu"]). C's build (bundle): the packed-query suites, with session
# 49's two cases of 4100 sequences (never run), then A (session 49's final tree) / B (the single-tile
# grid takes seq_order: unmasked paged packed calls longest first) / C (B + unmasked paged packed
# calls on the dynamic schedule) rotated, two rounds: issue 17's batch on pages of 16 and 256.
source benchmarks/device_call.sh
dc_setup C > /dev/null
dc_tests 'VarlenOrder*:*Varlen*:*PagedPrefill*' 220 16
V=1374,3778,2225,3022,3204,498,2283
DC_BENCH_FLAGS="" dc_abn "A B C" 'fwd' "--varlen $V --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen $V --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" \
  "--varlen $V --paged 16,256 --dhead 64 --heads 32 --kernel auto" > "$O/abc.txt"
{ dc_summary A B "$O/abc.txt"; dc_summary A C "$O/abc.txt"; } | tee "$O/summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
