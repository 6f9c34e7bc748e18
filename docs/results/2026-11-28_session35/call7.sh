#!/usr/bin/env bash
# Session 35, call 7: the final build (kTreeMax: the tree row max for 128-key tiles only). Every
# kernel's SASS equals call 6's M (72 fwd_07/08/09 kernels at hdim 64 / 128, whose forward, window
# and decode suites passed there) or the tree before (428 others). Here: memcheck / racecheck on the
# changed kernels (fwd_09 hdim 128 GQA causal, persistent; fwd_08 hdim 64 odd lengths; fwd_07), and
# the runner's every-variant check on a few shapes.
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 2 --seq 700 --seq-k 1333 --causal" \
  "$B/runner --kernel wgmma_pingpong --dhead 64 --heads 2 --seq 333 --seq-k 517" \
  "$B/runner --kernel wgmma --dhead 128 --heads 2 --seq 257 --causal"
dc_runner "--dhead 128 --heads 4 --heads-kv 2 --seq 1000 --seq-k 1531 --causal" "--dhead 64 --heads 4 --seq 777" \
  "--dhead 128 --heads 2 --seq 640 --softcap 30 --sinks --causal" "--dhead 64 --heads 2 --varlen 1,128,129,500 --causal"
echo "total: $((SECONDS - DC_T0)) s"
