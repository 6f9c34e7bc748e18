#!/usr/bin/env bash
# Session 68, call 6: ncu source pages of R's page-16 kernel (4 x 4096 full and causal, hdim 128) and
# the contiguous walk beside it: what the 16-key-page consumers still spend a step that the walk's
# do not, after R.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup R > /dev/null
S="--dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --min-time 0.05"
dc_ncu contig 'wgmma_(persistent|window)_kernel' 10 "$B/bench" --paged 16 $S --benchmark_filter=fwd_paged_contig
dc_ncu p16 'wgmma_(persistent|window)_kernel' 10 "$B/bench" --paged 16 $S --benchmark_filter=fwd_paged16
dc_ncu p16c 'wgmma_(persistent|window)_kernel' 10 "$B/bench" --paged 16 $S --causal --benchmark_filter=fwd_paged16
tar -cf "$O/ncu.tar" -C "$O" r && rm -rf "$O/r"
echo "total: $((SECONDS - DC_T0)) s"
