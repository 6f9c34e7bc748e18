#!/usr/bin/env bash
# Session 48, call 5 (carry [".gpu"]). C = Z with the decode metadata check free of per-entry
# divisions (bundle.txz: bench, runner, test_gpu); K = call 4's K (Z's decode within 0.5%).
# ncu of C's check at 64 x 4k page 16; the decode suites on C; memcheck / racecheck of a paged
# runner decode call; runner --decode on C; then K / C rotated, four rounds of `./bench --decode`.
source benchmarks/device_call.sh
dc_setup C > /dev/null
timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:check_metadata -c 4 "$G/C/bench" --decode \
  --batch 64 --cache 4096 --min-time 0.01 --benchmark_filter=page16 2>&1 | grep -E "gpu__time_duration" | tee "$O/ncu.txt"
timeout 150 "$B/runner" --decode 2>&1 | grep -E "\[OK|FAIL|rror:|xception" > "$O/runner.txt"
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
dc_tests 'Decode*:*/Decode*' 200 8 | tail -10
dc_sanitize "$B/runner --decode --batch 5 --cache 3000 --dhead 128"
DC_BENCH_FLAGS="" dc_abn "K C" '^decode/' "--decode" "--decode" > "$O/ab.txt" 2>&1
dc_summary K C "$O/ab.txt" us | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
