#!/usr/bin/env bash
# Prepared in session 30 for the next session (not run: the device time ran out; ~1.5 minutes).
# X = exp_bwd80_mods.patch (hdim 128 calls with softcap / ALiBi on bwd_03's 80-row steps, as plain
# and variable-length calls now are; ptxas spills 16-56 bytes, 3-6 spill instructions in the
# ~1300-instruction step loop) against the tree B. A/B only; if it wins: the backward suites and
# sanitizers on a softcap case before it lands. Predicted: +0-4% (the 80-row gain of ~5%, less
# the spills; the forward's 160-key tiles lost 22% to a 4-register spill in a short loop).
# Build here: git apply next/exp_bwd80_mods.patch, cmake --build --preset h200 --target bench,
#   mkdir -p /tmp/Xpack/X && cp build-gpu/bin/bench /tmp/Xpack/X/, git checkout kernels,
#   cmake --build --preset h200 && benchmarks/pack_gpu.sh (B),
#   tar -cf - -C /tmp/Xpack X | xz -T2 --lzma2=preset=6,dict=192MiB > .gpu/A.txz; carry [".gpu"].
source benchmarks/device_call.sh
dc_setup B > /dev/null
c="--batch 1 --heads 16 --seq 16384 --dhead 128 --kernel wgmma"
dc_ab B X 'bwd/wgmma/' "$c --causal --softcap 30" "--seq 8192 --dhead 128 --kernel wgmma --alibi" > "$O/ab.txt"
dc_summary B X "$O/ab.txt" | tee "$O/ab_summary.txt"
