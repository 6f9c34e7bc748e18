#!/usr/bin/env bash
# Session 52, call 4 (carry [".gpu"]). The bundle = HEAD (R + the dense dynamic schedule at 24 / 240)
# + experiment K: the dkv kernels count themselves done for the dQ convert's early start only when
# p.kv_done_target > 0, which the host sets unless FLASH_EXP_NOEARLY is set (then the convert is
# launched after the dkv grid, as deterministic calls do). K0 = default (early start, as HEAD),
# K1 = FLASH_EXP_NOEARLY=1. Issue 16's backward rows (non-deterministic), two rounds rotated.
source benchmarks/device_call.sh
dc_setup K0 > /dev/null
mkdir -p "$G/K1"
printf '#!/bin/sh\nFLASH_EXP_NOEARLY=1 exec %s "$@"\n' "$B/bench" > "$G/K1/bench"
chmod +x "$G/K1/bench"
dc_abn "K0 K1" '^bwd/auto/' \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --causal --kernel auto" \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --window 128,0 --kernel auto" \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --window 4096,0 --kernel auto" \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --kernel auto" \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --causal --kernel auto" \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --window 128,0 --kernel auto" \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --window 4096,0 --kernel auto" \
  "--seq 8192 --batch 2 --heads 16 --dhead 128 --kernel auto" \
  "--seq 2048 --batch 8 --heads 16 --dhead 128 --window 512,0 --kernel auto" > "$O/k.txt"
dc_summary K0 K1 "$O/k.txt" | tee "$O/k_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
