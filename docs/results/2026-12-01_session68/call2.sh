#!/usr/bin/env bash
# Session 68, call 2: ncu of the forward kernel (hdim 128, bf16, 4 x 4096 x 16 heads, full) on the
# contiguous cache (the walk), page 256 (the walk, row-group layout, one 5-D box a K / V tile), page
# 16 (the 3-stage grid kernel, eight boxes a tile) and E1's page 256 (the walk, plain layout, two 4-D
# boxes a tile, as the contiguous cache; call 1: 0.92 of contiguous where Z's is 0.96): where the
# paged kernels' extra time sits (consumer waits for K / V, or slower math).
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup Z > /dev/null
S="--dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --min-time 0.05"
dc_ncu contig 'wgmma_(persistent|window)_kernel' 10 "$G/Z/bench" --paged 16 $S --benchmark_filter=fwd_paged_contig
dc_ncu p256 'wgmma_(persistent|window)_kernel' 10 "$G/Z/bench" --paged 256 $S --benchmark_filter=fwd_paged256
dc_ncu p16 'wgmma_(persistent|window)_kernel' 10 "$G/Z/bench" --paged 16 $S --benchmark_filter=fwd_paged16
dc_ncu e1p256 'wgmma_(persistent|window)_kernel' 10 "$G/E1/bench" --paged 256 $S --benchmark_filter=fwd_paged256
for n in contig p256 p16 e1p256; do grep -E "^\s*fwd_10|Duration|SM Throughput|Registers Per|Shared Memory Config|Grid Size" "$O/r/$n.log" | head -8; done
tar -cf "$O/ncu.tar" -C "$O" r && rm -rf "$O/r"
echo "total: $((SECONDS - DC_T0)) s"
