#!/usr/bin/env bash
# Session 36, call 2: the kept build's forward / window / decode / paged tests (8 shards),
# memcheck and racecheck on fwd_09 / fwd_10, the runner's every-variant check.
set -u
source benchmarks/device_call.sh
dc_setup B > /dev/null
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 2 --seq 700 --seq-k 1333 --causal" \
  "$B/runner --kernel wgmma_persistent --dhead 256 --heads 2 --seq 333 --seq-k 517 --softcap 15" \
  "$B/runner --kernel wgmma_window --dhead 64 --heads 4 --heads-kv 2 --seq 1500 --window 300,0 --causal"
dc_runner "--dhead 128 --heads 4 --heads-kv 2 --seq 333 --seq-k 700 --causal" "--dhead 64 --seq 777" \
  "--dhead 256 --heads 2 --seq 300 --softcap 30 --sinks" "--dhead 128 --heads 4 --varlen 1,128,129,500 --causal"
dc_tests '*Forward*:*Decode*:*Window*:*Paged*-*BackwardWindow*:*Bwd*' 220 8
echo "total: $((SECONDS - DC_T0)) s"
