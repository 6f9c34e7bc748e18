#!/usr/bin/env bash
# Session 48, call 9 (carry [".gpu"]). U = the final tree with the decode check holding 16 table
# entries a thread in flight (one memory round up to 16384 entries; bundle.txz); C = call 8's
# build (8 a thread; C.txz). ncu of U's check at 64 x 4k page 16, the decode error / paged suites
# on U, then C / U rotated, two rounds of `./bench --decode`.
source benchmarks/device_call.sh
dc_setup U > /dev/null
timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:check_metadata -c 3 "$G/U/bench" --decode \
  --batch 64 --cache 4096 --min-time 0.01 --benchmark_filter=page16 2>&1 | grep -E "gpu__time_duration" | tee "$O/ncu.txt"
dc_tests 'DecodeErrors*:DecodeVarlenErrors*:*DecodePaged*' 60 4 | grep -E "shard|PASSED|FAILED" | tr '\n' ' '; echo
rm -f "$O/tests.txt"
DC_BENCH_FLAGS="" dc_abn "C U" '^decode/' "--decode" > "$O/ab.txt" 2>&1
dc_summary C U "$O/ab.txt" us | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
