#!/usr/bin/env bash
# Session 52, call 9 (carry [".gpu"]). The final tree (bundle): bwd_03's early-convert thresholds 8 /
# 5 steps (hdim 64's 128-row steps / hdim 128's 64- and 80-row steps). The runner on narrow-window
# backward calls on either side of the threshold (both modes), and the edge cells once.
source benchmarks/device_call.sh
dc_setup H > /dev/null
dc_runner "--bwd --dhead 128 --heads 4 --heads-kv 2 --batch 2 --seq 1000 --window 256,0" \
  "--bwd --dhead 128 --heads 4 --batch 2 --seq 1000 --window 128,0" \
  "--bwd --dhead 64 --heads 4 --heads-kv 1 --batch 2 --seq 1300 --window 512,0"
cat "$O/runner.txt"
DC_BENCH_FLAGS="--bwd" dc_abn "H" '^bwd/auto/' \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --window 512,0 --kernel auto" \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --window 256,0 --kernel auto" \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --window 128,0 --kernel auto" > "$O/final.txt"
cat "$O/final.txt"
echo "total: $((SECONDS - DC_T0)) s"
