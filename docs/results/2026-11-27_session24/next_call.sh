#!/usr/bin/env bash
# Session 25's device calls, prepared in session 24 (run from the repository root on the device).
# Build here first (about 12 minutes on 2 cores):
#   cmake --preset h200 && cmake --build --preset h200 && benchmarks/pack_gpu.sh      # .gpu/bundle.txz, ~16 MB
#   three deterministic-mode builds of bench (subset bwd_wgmma;bwd_wgmma_wide;wgmma_persistent, hdims
#   64;128;256, sm_90a), each a worktree of HEAD with patches from this folder: d80 =
#   exp_bwd03_rows80_det.patch, dg = exp_bwd_det_head_groups.patch, dg80 = both; their bench
#   binaries in d80/ dg/ dg80/ of one tarball: tar -cf - d80 dg dg80 | xz -T1
#   --lzma2=preset=6,dict=192MiB > .gpu/det.txz (session 24 built them so: ~9 min, 16 MB)
#   ../shared/anchors/fa4/stage.sh                                                      # .anchors/, once
#   cp docs/results/2026-11-27_session24/next_call.sh .gpu/
# Calls (the machine stays warm 30 s: issue each right after the one before):
#   1. carry [".anchors/fa4-part1"]: the cu13 libraries (stage.sh's header), ~1 min
#   2. carry [".anchors/fa4-part2", ".gpu"]: STEPS="fa4" bash .gpu/next_call.sh        (~6 min)
#   3. same carry: STEPS="ours detab" bash .gpu/next_call.sh                           (~3 min)
#   4. carry [".gpu"]: STEPS="tests" bash .gpu/next_call.sh                            (~8 min)
set -u
G=$(cd "$(dirname "$0")" && pwd)
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
[ -d "$G/bin" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/bundle.txz" "$G"
[ -d "$G/dg80" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/det.txz" "$G"
export LD_LIBRARY_PATH=$G/lib
B=$G/bin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$O/gpu.txt"
for step in ${STEPS:-fa4}; do case $step in
fa4)  # issue 18's table: FA4 (bursts and 0.5 s) against flash auto, hdims 64 and 128, then FA4 det and cuDNN
  source .anchors/fa4-part2/install.sh || exit 3
  timeout 330 python3 benchmarks/fa4_bwd_matched.py "$B/bench" "$O/bwd_matched.json" 64,128 | tee "$O/bwd_matched.txt"
  timeout 200 python3 .anchors/fa4-part2/fa4_bench.py --parts bwd --dheads 64,128 --json "$O/fa4_bwd.json" | tail -20 ;;
ours)  # flash's table rows, both modes (README "The Hopper backward against FlashAttention-4")
  for d in 64 128; do for s in 8192 16384; do for c in "" --causal; do
    timeout 60 "$B/bench" --bwd --seq $s --dhead $d $c --benchmark_filter=bwd/wgmma 2>&1 | grep -E "^bwd"
  done; done; done | tee "$O/flash_bwd.txt" ;;
detab)  # deterministic mode: the tree (A) against 80-row steps (d80), head groups (dg), both (dg80)
  cells=("--seq 8192 --dhead 128|A d80 dg dg80" "--seq 16384 --dhead 128|A d80 dg dg80"
         "--seq 8192 --dhead 128 --causal|A dg" "--seq 8192 --dhead 64|A dg" "--seq 8192 --dhead 64 --causal|A dg"
         "--seq 8192 --dhead 256|A dg")
  for r in 0 1; do for c in "${cells[@]}"; do
    cell=${c%%|*}; order=${c#*|}; [ $r = 1 ] && order=$(echo $order | tr ' ' '\n' | tac | tr '\n' ' ')
    k=wgmma; case "$cell" in *256*) k=wgmma_wide;; esac
    for t in $order; do
      bin=$G/$t/bench; [ $t = A ] && bin=$B/bench
      # shellcheck disable=SC2086
      timeout 60 "$bin" --bwd $cell --kernel $k 2>&1 | grep -E "^bwd" | sed "s/^/$t /"
    done
  done; done | tee "$O/detab.txt" ;;
tests)  # the backward tests in 4 shards (line-buffered: a killed shard still says where it was), then sanitizers
  for k in 0 1 2 3; do
    GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k timeout 420 stdbuf -oL "$B/test_gpu" --gtest_filter='*Backward*:*Bwd*' \
      > "$O/bwd_tests_$k.txt" 2>&1 &
  done; wait
  for k in 0 1 2 3; do echo "shard $k: $(grep -c '^\[       OK' "$O/bwd_tests_$k.txt") ok"; grep -E "^\[  (PASSED|FAILED)" "$O/bwd_tests_$k.txt" | head -5; done
  timeout 60 "$B/test_c_api_gpu" > "$O/test_c_api_gpu.txt" 2>&1; echo "test_c_api_gpu rc=$?"
  F='Grid/BackwardGrid.MatchesReference/bf16_d128_full_sq257_sk129_gqa4:Grid/BackwardGrid.MatchesReference/f16_d64_causal_sq113_sk203_mqa:Grid/BackwardGrid.MatchesReference/bf16_d256_full_sq113_sk203_gqa4'
  for tool in memcheck racecheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 "$B/test_gpu" --gtest_filter="$F" > "$O/$tool.txt" 2>&1
    echo "$tool rc=$?"; tail -2 "$O/$tool.txt"
  done ;;
esac; done
