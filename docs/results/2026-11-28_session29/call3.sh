#!/usr/bin/env bash
# Prepared in session 28 for the next session (not run; ~9 minutes).
#  1. A/B of the 80-row choice: A = exp_rows80_always.patch (call 1's dispatch: 80-row steps for
#     every mask at hdim 128), B = the tree (80-row steps where Mask::walked_rows says they walk
#     fewer rows, weighted by speed). Predicted (NOTES, session 28): (128, 0) +15-19%, (512, 0)
#     +3-5%, causal 2k within 1% (B runs the 64-row kernel in all three).
#  2. exp_dk_after_dv.patch (C) against the tree (B): dK's product issued once dV is done
#     (FlashAttention-4's order: both warpgroups' dQ products ahead of either dK). SASS here: one
#     more WARPGROUP.DEPBAR per step, same instruction count and registers, no serialization.
#     Predicted +1-2% at hdim 64 and 128 (the 7-15% of stall samples at the dQ wait shrink).
#  2b. exp_dq_named_barriers.patch (D) against B: the dQ hand-off on named barriers (160
#     threads per consumer warpgroup) with the writer a whole warp that blocks in BAR.SYNC
#     (FlashAttention-4's protocol) instead of mbarriers and a one-thread spinning writer. SASS
#     here: consumer step loops 1-2 instructions shorter, the writer's loop unrolled (~750
#     instructions after setmaxnreg.dec, highest R21 of the 24 kept: benchmarks/sass_walk.py). Predicted
#     +0.5-1.5% (no spinning warp beside consumer warps, no diverged warp); racecheck before
#     landing.
#  2c. exp_fwd_k_before_v.patch (E) against B, forward: the producer loads K of tile i + 1 before
#     V of tile i (FlashAttention-3/4's order; dense calls, produce() only). Why: session 21's
#     source counters show the producer retrying 24.4M (hdim 128) / 9.5M (hdim 256) times on V's
#     empty barrier and ~0 on K's, and the consumers' waits for K/V data at 3.2-3.8% of samples
#     at hdims 128 / 256 (0.6% at hdim 64's three stages). SASS here: +48-56 instructions per
#     kernel (load_k inlined twice), producer code at most R21. Predicted +1-2% at hdims 128 and
#     256, ~0 at hdim 64. Forward tests and sanitizers before it could land.
#  3. hdim 256 in both modes; issue 16's table (flash forward and backward, `auto`) and FA4's features part in one call.
# Build here: A = apply the patch, cmake --build --preset h200 --target bench,
#   mkdir -p /tmp/Apack/A && cp build-gpu/bin/bench /tmp/Apack/A/, git checkout kernels,
#   rebuild, benchmarks/pack_gpu.sh (B), tar -cf - -C /tmp/Apack A | xz -T2 --lzma2=preset=6,dict=192MiB > .gpu/A.txz,
#   C = apply exp_dk_after_dv.patch, rebuild bench, mkdir -p /tmp/Apack/C && cp build-gpu/bin/bench
#   /tmp/Apack/C/, git checkout kernels; D the same with exp_dq_named_barriers.patch, E with
#   exp_fwd_k_before_v.patch; pack A, C, D and E together: tar -cf - -C /tmp/Apack A C D E | xz ... > .gpu/A.txz;
#   cp this script to .gpu/.
# Device: stage FA4 first (two calls within the warm window, call3_fa4.sh's header), then
#   bash .gpu/next_call.sh with carry [".gpu", ".anchors/fa4-part2"].
source benchmarks/device_call.sh
dc_setup B
c="--batch 1 --heads 16 --seq 16384 --dhead 128 --kernel wgmma"
dc_ab A B 'bwd/wgmma' "$c --causal --window 128,0" "$c --causal --window 512,0" \
  "--batch 8 --heads 16 --seq 2048 --dhead 128 --causal --kernel wgmma" | tee "$O/ab.txt"
dc_ab B C 'bwd/wgmma' "--seq 8192 --dhead 64 --kernel wgmma" "--seq 8192 --dhead 128 --kernel wgmma" \
  "--seq 16384 --dhead 128 --causal --kernel wgmma" | tee -a "$O/ab.txt"
dc_ab B D 'bwd/wgmma' "--seq 8192 --dhead 64 --kernel wgmma" "--seq 8192 --dhead 128 --kernel wgmma" \
  "--seq 16384 --dhead 128 --causal --kernel wgmma" | tee -a "$O/ab.txt"
DC_BENCH_FLAGS="" dc_ab B E 'fwd/auto' "--seq 16384 --dhead 128 --kernel auto" "--seq 8192 --dhead 128 --causal --kernel auto" \
  "--seq 8192 --dhead 256 --causal --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" | tee -a "$O/ab.txt"
{ dc_summary A B "$O/ab.txt"; dc_summary B C "$O/ab.txt"; dc_summary B D "$O/ab.txt"; dc_summary B E "$O/ab.txt"; } | tee "$O/ab_summary.txt"
# hdim 256, both modes (issue 18's det / non-det >= 0.9; 0.85 on the H100 in session 28's call 2).
for m in "" "--causal"; do for q in 8192 16384; do
  timeout 60 "$B/bench" --bwd --seq $q --dhead 256 $m --kernel wgmma_wide 2>&1 | grep -E "^bwd" |
    sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
done; done | tee "$O/d256_modes.txt"
STEPS="wbench" WBWD=1 WBKERNEL=auto OUT=$O benchmarks/h200_check.sh > /dev/null 2>&1
cat "$O/wbench.txt"
if source .anchors/fa4-part2/install.sh; then
  timeout 300 python3 .anchors/fa4-part2/fa4_bench.py --parts features --json "$O/fa4_features.json" 2>&1 |
    grep -v -E "UserWarning|exe_args" | tail -30 | tee "$O/fa4_features.txt"
fi
echo "total: $((SECONDS - DC_T0)) s"
