#!/usr/bin/env bash
# Session 69, call 2: the ncu source page of call 1's QA kernel (the 16-key-page walk, Q read ahead) at
# 4 x 4096 full, hdim 128, beside session 68 call 6's p16 page (HEAD's 3-stage grid kernel, the same
# command): QA lost 2.7-3.1% at 4 x 4096 and 1 x 16k, where the tile starts it removes are 1/32 and
# 1/128 of the steps, so its steps cost more. Where?
# carry [".gpu"] (X.txz).
set -u
source benchmarks/device_call.sh
dc_setup Y > /dev/null
S="--dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --min-time 0.05"
dc_ncu qa 'wgmma_(persistent|window)_kernel' 10 "$G/X/bench" --paged 16 $S --benchmark_filter=fwd_paged16
tar -cf "$O/ncu.tar" -C "$O" r && rm -rf "$O/r"
echo "total: $((SECONDS - DC_T0)) s"
