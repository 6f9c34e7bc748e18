#!/usr/bin/env bash
# Session 53, call 16 (carry [".gpu"]). W = this tree: call 15's whole-tile loads as a template flag
# (kWholeTiles: contiguous caches and pages of >= 64 keys), so that 16- and 32-key pages run
# session 52's kernels (SASS-identical; call 15's run-time flag cost them 0.2-2.8%). A = session
# 52's bench. Decode with --flush always, two rounds; the decode suites; the sanitizers on the
# whole-tile kernels (contiguous with a tail tile, pages of 64).
source benchmarks/device_call.sh
dc_setup W > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "A W" '^decode' "" | tee "$O/ab_flush.txt" > /dev/null
dc_summary A W "$O/ab_flush.txt" us | tee "$O/ab_summary.txt"
dc_tests 'Decode*:*/Decode*:ConcurrencyCapture.*' 120 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
dc_sanitize "$B/runner --decode --batch 5 --cache 3000 --dhead 128 --heads 8 --heads-kv 2" \
  "$B/runner --decode --batch 3 --cache 1000 --page-size 64 --dhead 256 --heads 8 --heads-kv 2"
echo "total: $((SECONDS - DC_T0)) s"
