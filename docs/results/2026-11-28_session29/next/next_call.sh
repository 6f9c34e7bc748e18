#!/usr/bin/env bash
# Prepared in session 29 for the next session (not run; ~8 minutes after FA4 staging).
#  1. J = exp_fwd256_no_pingpong_rescale_early.patch against the tree (B): the forward at hdim 256
#     without the pingpong turns, O rescaled right after S(i) is issued instead of after PV(i-1)
#     completes (FlashAttention-3's order at hdim 256; NOTES session 28, FA4 reading item 2).
#     SASS here: only the 20 hdim 256 forward kernels change (+128 FMUL: the rescale before the
#     last PV), no serialization warning, registers R227-R233. Session 21's source counters:
#     the rescale 8.6% of samples, turn waits ~2.4% at hdim 256. Predicted +1-3% at hdim 256
#     (full and causal, 8k and 16k); every other head dim is SASS-identical.
#  2. Issue 19's forward table beside FA4 and cuDNN (fa4_fwd_matched.py, 2k-16k), on B.
# Build here: apply the patch, cmake --build --preset h200 --target bench,
#   mkdir -p /tmp/Jpack/J && cp build-gpu/bin/bench /tmp/Jpack/J/, git checkout kernels, rebuild,
#   benchmarks/pack_gpu.sh (B), tar -cf - -C /tmp/Jpack J | xz -T2 --lzma2=preset=6,dict=192MiB > .gpu/A.txz.
# Device: stage FA4 first (two calls within the warm window: carry [".anchors/fa4-p1a"]
#   `cp .anchors/fa4-p1a/cu13.xz.0 /tmp/`, then carry [".anchors/fa4-p1b"] and unpack to
#   /tmp/fa4site, as in session 29's calls 5a / 5b), then this script with carry
#   [".gpu", ".anchors/fa4-part2"]. If J wins: the forward tests (test_gpu minus the backward
#   suites, ~984 tests in 3-4 shards) and memcheck / racecheck on a hdim 256 runner case.
source benchmarks/device_call.sh
dc_setup B
DC_BENCH_FLAGS="" dc_ab B J 'fwd/auto' "--seq 8192 --dhead 256 --kernel auto" "--seq 16384 --dhead 256 --kernel auto" \
  "--seq 8192 --dhead 256 --causal --kernel auto" "--seq 16384 --dhead 256 --causal --kernel auto" \
  "--seq 2048 --dhead 256 --causal --kernel auto" > "$O/ab.txt"
dc_summary B J "$O/ab.txt" | tee "$O/ab_summary.txt"
source .anchors/fa4-part2/install.sh || exit 3
T0=$SECONDS
timeout 420 python3 benchmarks/fa4_fwd_matched.py "$B/bench" "$O/fwd_matched.json" 2048,4096,8192,16384 2>&1 |
  grep -v -E "UserWarning|exe_args" | tail -30 | tee "$O/fwd_matched.txt"
echo "total: $((SECONDS - T0)) s"
