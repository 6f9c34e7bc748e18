#!/usr/bin/env bash
# Session 47, call 5 (run twice: 5 on a build with stale host objects, void; 5b) (carry [".gpu"]). F = session 46's library with dec_01's combine inside the
# split kernel (bundle.txz: bench, runner, test_gpu); A = session 46's bench (A.txz). The decode
# suites on F, memcheck / racecheck on split calls, then A / F rotated (two rounds of
# `./bench --decode`, then the same in the other order), and cuDNN (sdpa_decode.py).
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_tests '*Decode*:ConcurrencyCapture.*' 170 8 | tail -12
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test_gpu" \
  --gtest_filter='DecodeSplits.*:DecodeVarlenSplits.*:DecodeWorkspace.*:DecodeErrors.*' > "$O/memcheck_tests.txt" 2>&1
echo "memcheck tests rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$O/memcheck_tests.txt" | head -4
dc_sanitize "$B/runner --decode --kernel splitkv --batch 3 --cache 3000 --heads 8 --heads-kv 2 --dhead 128 --splits 5" \
  "$B/runner --decode --kernel splitkv --batch 2 --cache 777 --heads 4 --heads-kv 1 --dhead 64 --page-size 16 --splits 3" 2>&1 | tail -6
{ DC_BENCH_FLAGS="" dc_abn "A F" '^decode' "--decode"; DC_BENCH_FLAGS="" dc_abn "F A" '^decode' "--decode"; } > "$O/ab_decode.txt" 2>&1
dc_summary A F "$O/ab_decode.txt" us | tee "$O/ab_summary.txt"
python3 benchmarks/sdpa_decode.py --json "$O/sdpa_decode.json" > "$O/sdpa_decode.txt" 2>&1; grep cudnn "$O/sdpa_decode.txt"
echo "total: $((SECONDS - DC_T0)) s"
