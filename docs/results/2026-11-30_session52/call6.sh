#!/usr/bin/env bash
# Session 52, call 6 (carry [".gpu"]). The final tree (bundle): R, D, and K with its rule on bwd_03
# only (bwd_04 keeps the early convert everywhere: call 5). Every GPU suite but the decode ones
# (unchanged kernels), 16 shards; memcheck / racecheck on hdim 256's narrow-window backward (the
# early convert with the runtime count).
source benchmarks/device_call.sh
dc_setup H > /dev/null
dc_tests '*:-*Decode*' 450 16 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --bwd --kernel auto --batch 1 --seq 500 --dhead 256 --heads 2 --window 128,0"
echo "total: $((SECONDS - DC_T0)) s"
