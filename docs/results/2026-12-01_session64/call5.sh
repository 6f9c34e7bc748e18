#!/usr/bin/env bash
# Session 64, call 5: the proof on the exact final kernels (call 4's bundle): every backward suite (the slow
# deterministic / varlen ones and the 30-run bitwise check included), memcheck and racecheck on 80-row causal,
# full and deterministic calls. carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_tests '*Backward*:*Bwd*:Concurrency*:Fuzz*' 330 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED" "$O/tests.txt" | head -5
grep -h -E "^\[       OK \].*(Runs|Bitwise|Identical|Fifty)" "$O/tests.txt" | head -5
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 2 --seq 1500 --heads 4 --heads-kv 2 --dhead 128 --causal" \
  "$B/runner --bwd --kernel wgmma --batch 2 --seq 1000 --seq-k 1333 --heads 4 --dhead 128 --window 300,40" \
  "$B/runner --bwd --kernel wgmma --batch 2 --seq 777 --heads 4 --heads-kv 1 --dhead 64 --causal"
echo "total: $((SECONDS - DC_T0)) s"
