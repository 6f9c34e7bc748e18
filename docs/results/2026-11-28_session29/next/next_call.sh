#!/usr/bin/env bash
# Prepared in session 29 for the next session (not run; ~8 minutes after FA4 staging).
#  1. J = exp_fwd256_no_pingpong_rescale_early.patch against the tree (B): the forward at hdim 256
#     without the pingpong turns, O rescaled right after S(i) is issued instead of after PV(i-1)
#     completes (FlashAttention-3's order at hdim 256; NOTES session 28, FA4 reading item 2).
#     SASS here: only the 20 hdim 256 forward kernels change (+128 FMUL: the rescale before the
#     last PV), no serialization warning, registers R227-R233. Session 21's source counters:
#     the rescale 8.6% of samples, turn waits ~2.4% at hdim 256. Predicted +1-3% at hdim 256
#     (full and causal, 8k and 16k); every other head dim is SASS-identical.
#  2. K1 = exp_dpsum_early80.patch, K2 = exp_dpsum_early80_mask_test_early.patch, against B, backward:
#     K1 reads each query's dpsum after the exp loop, before the wait for dP^T, at 80-row steps
#     (FA4's spot; session 29's reading of FA4's hdim 128 step, item 3: ~2.5% of our stall samples
#     sit on those loads after the wait). SASS: the 80-row kernels reordered, same instruction
#     counts, no spills (reading the LSE between the issues as well spilled 4-5 registers: not
#     prepared). K2 also decides whether the tile needs the Mask before S^T's wait (item 5; every
#     bwd_03 kernel changes, +0-8 instructions, no spills). Predicted K1 +0.5-1.5% at hdim 128
#     (0 at hdim 64: its kernels are identical), K2 a further +0-0.5%.
#  3. Issue 19's forward table beside FA4 and cuDNN (fa4_fwd_matched.py, 2k-16k), on B.
# Build here: apply the patch, cmake --build --preset h200 --target bench,
#   mkdir -p /tmp/Jpack/J && cp build-gpu/bin/bench /tmp/Jpack/J/, git checkout kernels, rebuild,
#   the same for K1 and K2 (each patch alone on the tree, into /tmp/Jpack/K1 and /tmp/Jpack/K2),
#   benchmarks/pack_gpu.sh (B), tar -cf - -C /tmp/Jpack J K1 K2 | xz -T2 --lzma2=preset=6,dict=192MiB > .gpu/A.txz.
# Device: stage FA4 first (two calls within the warm window: carry [".anchors/fa4-p1a"]
#   `cp .anchors/fa4-p1a/cu13.xz.0 /tmp/`, then carry [".anchors/fa4-p1b"] and unpack to
#   /tmp/fa4site, as in session 29's calls 5a / 5b), then this script with carry
#   [".gpu", ".anchors/fa4-part2"]. If K1 or K2 wins: the backward suites in 4 shards
#   (device_call.sh's dc_tests) and memcheck / racecheck on a hdim 128 runner case. If J wins: the forward tests (test_gpu minus the backward
#   suites, ~984 tests in 3-4 shards) and memcheck / racecheck on a hdim 256 runner case.
source benchmarks/device_call.sh
dc_setup B
DC_BENCH_FLAGS="" dc_ab B J 'fwd/auto' "--seq 8192 --dhead 256 --kernel auto" "--seq 16384 --dhead 256 --kernel auto" \
  "--seq 8192 --dhead 256 --causal --kernel auto" "--seq 16384 --dhead 256 --causal --kernel auto" \
  "--seq 2048 --dhead 256 --causal --kernel auto" > "$O/ab.txt"
dc_ab B K1 'bwd/wgmma' "--seq 8192 --dhead 128 --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma" >> "$O/ab.txt"
dc_ab B K2 'bwd/wgmma' "--seq 8192 --dhead 128 --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma" \
  "--seq 8192 --dhead 64 --causal --kernel wgmma" >> "$O/ab.txt"
{ dc_summary B J "$O/ab.txt"; dc_summary B K1 "$O/ab.txt"; dc_summary B K2 "$O/ab.txt"; } | tee "$O/ab_summary.txt"
source .anchors/fa4-part2/install.sh || exit 3
T0=$SECONDS
timeout 420 python3 benchmarks/fa4_fwd_matched.py "$B/bench" "$O/fwd_matched.json" 2048,4096,8192,16384 2>&1 |
  grep -v -E "UserWarning|exe_args" | tail -30 | tee "$O/fwd_matched.txt"
echo "total: $((SECONDS - T0)) s"
