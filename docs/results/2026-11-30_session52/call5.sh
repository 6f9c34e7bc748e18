#!/usr/bin/env bash
# Session 52, call 5 (carry [".gpu"]). The bundle = HEAD (R: hdim 128's paged persistent kernels at
# 40 / 232; D: the dense dynamic schedule at 24 / 240; K: the backward's early convert only where
# dkv CTAs take >= 8 steps). Every GPU suite but the decode ones (unchanged), 16 shards; memcheck /
# racecheck on D's kernel and a narrow-window backward. Then two switches (KDX.txz): K = call 4's
# build (FLASH_EXP_NOEARLY) on hdim 256's narrow windows; DX = HEAD + FLASH_EXP_DMAX (the dense
# causal dynamic schedule's key bound, 8192 in HEAD) at 16k.
source benchmarks/device_call.sh
dc_setup H > /dev/null
dc_tests '*:-*Decode*' 420 16 | tail -4
dc_sanitize "$B/runner --kernel auto --batch 2 --seq 1500 --seq-k 1700 --dhead 128 --heads 4 --heads-kv 2 --causal" \
  "$B/runner --bwd --kernel auto --batch 2 --seq 700 --dhead 64 --heads 4 --heads-kv 2 --window 128,0"
mkdir -p "$G/K1" "$G/D16"
printf '#!/bin/sh\nFLASH_EXP_NOEARLY=1 exec %s "$@"\n' "$G/K/bench" > "$G/K1/bench"
printf '#!/bin/sh\nFLASH_EXP_DMAX=16384 exec %s "$@"\n' "$G/DX/bench" > "$G/D16/bench"
chmod +x "$G/K1/bench" "$G/D16/bench"
dc_abn "K K1" '^bwd/auto/' \
  "--seq 8192 --batch 1 --heads 8 --dhead 256 --window 128,0 --kernel auto" \
  "--seq 2048 --batch 4 --heads 8 --dhead 256 --window 512,0 --kernel auto" > "$O/k256.txt"
dc_summary K K1 "$O/k256.txt" | tee "$O/k256_summary.txt"
DC_BENCH_FLAGS="" dc_abn "DX D16" '^fwd/' \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --causal --kernel auto" \
  "--seq 16384 --batch 1 --heads 32 --dhead 64 --causal --kernel auto" \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --causal --kernel auto" > "$O/d16.txt"
dc_summary DX D16 "$O/d16.txt" | tee "$O/d16_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
