#!/usr/bin/env bash
# Session 65, call 5: the proof on the exact final kernels (F: HEAD after dropping the walk, bwd_03
# SASS-identical to call 1's W): H (session 64's HEAD) -> F on the (128, 0) windows, two rotated rounds;
# every backward suite (the slow deterministic / varlen ones and the 50-run bitwise check included);
# memcheck and racecheck on a narrow window (the read-only wait), a varlen call and an 80-row causal call.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_abn "H F" 'bwd/auto/' \
  "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --window 128,0" \
  "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal --window 128,0" > "$O/ab.txt" 2>&1
dc_abn "H F" 'bwd_varlen/wgmma/' "--varlen --dhead 128 --heads 16 --causal" >> "$O/ab.txt" 2>&1
dc_summary H F "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
dc_tests '*Backward*:*Bwd*:Concurrency*:Fuzz*' 330 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED" "$O/tests.txt" | head -5
grep -h -E "^\[       OK \].*(Runs|Bitwise|Identical|Fifty)" "$O/tests.txt" | head -5
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 2 --seq 700 --seq-k 1000 --heads 4 --heads-kv 2 --dhead 64 --causal --window 128,0" \
  "$B/runner --bwd --kernel wgmma --batch 2 --seq 1500 --heads 4 --heads-kv 2 --dhead 128 --causal" \
  "$B/runner --bwd --kernel wgmma --batch 2 --seq 1000 --seq-k 1333 --heads 4 --dhead 128 --window 300,40"
echo "total: $((SECONDS - DC_T0)) s"
