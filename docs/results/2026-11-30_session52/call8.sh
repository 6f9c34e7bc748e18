#!/usr/bin/env bash
# Session 52, call 8 (carry [".gpu"]). The early-convert threshold (bwd_03: >= 8 steps a CTA) at its
# edge: call 4's build (K.txz; K / K1 = FLASH_EXP_NOEARLY off / on) on windows of 256 and 512 keys,
# hdim 64 (128-row steps: ~4 / ~6 steps a CTA) and hdim 128 (~6 / ~9), two rounds.
source benchmarks/device_call.sh
dc_setup H > /dev/null
mkdir -p "$G/K1"
printf '#!/bin/sh\nFLASH_EXP_NOEARLY=1 exec %s "$@"\n' "$G/K/bench" > "$G/K1/bench"
chmod +x "$G/K1/bench"
dc_abn "K K1" '^bwd/auto/' \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --window 256,0 --kernel auto" \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --window 512,0 --kernel auto" \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --window 256,0 --kernel auto" \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --window 512,0 --kernel auto" > "$O/edge.txt"
dc_summary K K1 "$O/edge.txt" | tee "$O/edge_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
