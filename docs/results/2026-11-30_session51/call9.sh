#!/usr/bin/env bash
# Session 51, call 9 (carry [".gpu"]). The final tree: dense causal calls of 4097-8192 keys on the
# dynamic schedule (kFa3DynamicMaxKeysDense). The wide-window suite with its new causal 1000 x 5000
# case, the runner on dense causal calls past 4096 keys, memcheck / racecheck on one.
source benchmarks/device_call.sh
dc_setup Z > /dev/null
dc_tests '*WindowWide*' 120 16
dc_runner() { local a; for a in "$@"; do timeout 60 "$B/runner" $a 2>&1 | tail -2; done; }
dc_runner "--kernel auto --batch 1 --seq 3000 --seq-k 6000 --heads 4 --heads-kv 2 --dhead 128 --causal" \
  "--kernel auto --batch 1 --seq 5000 --heads 2 --dhead 64 --causal" \
  "--kernel auto --batch 2 --seq 4500 --heads 2 --heads-kv 1 --dhead 128 --causal --dtype f16" | tee "$O/runner.txt"
dc_sanitize "$B/runner --kernel auto --batch 1 --seq 600 --seq-k 4600 --heads 2 --dhead 64 --causal"
echo "total: $((SECONDS - DC_T0)) s"
