#!/usr/bin/env bash
# Session 53, call 15 (carry [".gpu"]). N = this tree: dec_01's whole-tile loads (a tile whose rows
# share one cache block, contiguous or pages of >= 64 keys, computes its 64-bit source address once
# and steps by a constant per row; call 14's ncu had ~790 instructions a warp and tile, two thirds
# address arithmetic, and a CTA issue-bound at ~24 GB/s). A = session 52's bench. Predicted (NOTES):
# contiguous and page 256 -3 to -7% time at all three shapes, page 16 unchanged (general path).
# Then the decode suites, and the sanitizers on both load paths.
source benchmarks/device_call.sh
dc_setup N > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "A N" '^decode' "" | tee "$O/ab_flush.txt" > /dev/null
DC_BENCH_FLAGS="--decode" dc_abn "A N" '^decode' "" | tee "$O/ab.txt" > /dev/null
{ echo "--flush always"; dc_summary A N "$O/ab_flush.txt" us; echo "default"; dc_summary A N "$O/ab.txt" us; } | tee "$O/ab_summary.txt"
dc_tests 'Decode*:*/Decode*:ConcurrencyCapture.*' 170 16 | tail -20
dc_sanitize "$B/runner --decode --batch 5 --cache 3000 --dhead 128 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 3 --cache 1000 --page-size 64 --dhead 128 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 3 --cache 777 --page-size 16 --dhead 64 --heads 4 --heads-kv 4"
echo "total: $((SECONDS - DC_T0)) s"
