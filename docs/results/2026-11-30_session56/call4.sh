#!/usr/bin/env bash
# Session 56, call 4 (carry [".gpu"]): hdim 128's narrow windows (fwd_10, two CTAs an SM walking) on
# 32-key K/V tiles with a deeper ring. W0 = HEAD (64 keys, 2 stages: one tile of 64 keys in flight
# ahead), W1 = 32 keys, 4 stages (96 keys ahead), W2 = 32 keys, 3 stages (64 keys ahead, finer).
# Call 3's ncu: DRAM 48%, L2 62%, issue 37%, the consumers' top stalls the barrier waits for data.
# Prediction (NOTES): W1 +5-12% on (128, 0); W2 within +-3% of W0 (same lookahead).
source benchmarks/device_call.sh
dc_setup H > /dev/null
S="--seq 16384 --batch 1 --heads 16 --dhead 128 --kernel auto"
DC_BENCH_FLAGS="" dc_abn "W0 W1 W2" '^fwd' "$S --causal --window 128,0" "$S --window 64,63" \
  "$S --causal --window 256,0" "$S --causal --window 383,0" > "$O/ab.txt"
dc_summary W0 W1 "$O/ab.txt" > "$O/ab_summary.txt"
dc_summary W0 W2 "$O/ab.txt" >> "$O/ab_summary.txt"
cat "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
