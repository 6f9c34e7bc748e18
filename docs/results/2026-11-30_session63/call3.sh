#!/usr/bin/env bash
# Session 63, call 3: the order of masked non-deterministic backward CTAs. One binary (G) read by
# environment: G1 = the grid's order (G's code, head_group 1), G2 = pairs two at a time (call 2's
# G), T4 / T8 = the grid's order but the last 4 / 8 pairs interleaved; H = HEAD. Two rotated rounds.
# carry [".gpu"].
source benchmarks/device_call.sh
dc_setup H > /dev/null
{ dc_abn "H G1 G2 T4 T8" 'bwd/auto/' \
    "--kernel auto --dhead 128 --seq 8192 --batch 2 --heads 16 --causal" \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal" \
    "--kernel auto --dhead 64 --seq 16384 --batch 1 --heads 32 --causal" \
    "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal" \
    "--kernel auto --dhead 256 --seq 8192 --batch 2 --heads 8 --causal" \
    "--kernel auto --dhead 128 --seq 8192 --batch 2 --heads 16"
} > "$O/ab.txt" 2>&1
for t in G1 G2 T4 T8; do dc_summary H $t "$O/ab.txt" | cut -c1-48,58-90; done | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
