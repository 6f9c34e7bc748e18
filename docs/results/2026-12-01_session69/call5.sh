#!/usr/bin/env bash
# Session 69, call 5: ncu source pages of HEAD's paged walk at pages of 4096 keys (one page a
# sequence: the contiguous cache's memory, call 4: still 0.965-0.970 of contiguous) beside the
# contiguous walk, 4 x 4096 full hdim 128: what the paged kernel's code costs a step.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
S="--dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --min-time 0.05"
dc_ncu contig 'wgmma_(persistent|window)_kernel' 10 "$B/bench" --paged 4096 $S --benchmark_filter=fwd_paged_contig
dc_ncu p4096 'wgmma_(persistent|window)_kernel' 10 "$B/bench" --paged 4096 $S --benchmark_filter=fwd_paged4096
tar -cf "$O/ncu.tar" -C "$O" r && rm -rf "$O/r"
echo "total: $((SECONDS - DC_T0)) s"
