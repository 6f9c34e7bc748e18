#!/usr/bin/env bash
# Prepared for the next session (not run): 80-row steps for masked hdim 128 calls
# (exp_bwd03_rows80_masked.patch), A/B and the tests in one call (~7.5 minutes).
# Build here: A = the tree (cmake --preset h200 && cmake --build --preset h200;
#   mkdir -p /tmp/Apack/A && cp build-gpu/bin/bench /tmp/Apack/A/), then
#   git apply docs/results/2026-11-28_session27/exp_bwd03_rows80_masked.patch, rebuild,
#   benchmarks/pack_gpu.sh (B), tar -cf - -C /tmp/Apack A | xz -T2 --lzma2=preset=6,dict=192MiB > .gpu/A.txz,
#   cp this script to .gpu/; run: bash .gpu/next_call.sh, carry [".gpu"].
source benchmarks/device_call.sh
dc_setup B
{
  dc_ab A B 'bwd/wgmma' "--seq 8192 --dhead 128 --causal --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma"
  dc_ab A B 'bwd/wgmma/' "--seq 16384 --dhead 128 --window 4096,0 --kernel wgmma" "--seq 8192 --dhead 128 --kernel wgmma"
} | tee "$O/ab.txt"
dc_summary A B "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 2 --seq 700 --seq-k 1333 --heads 8 --heads-kv 2 --dhead 128 --causal" \
  "$B/runner --bwd --kernel wgmma --batch 2 --seq 1000 --heads 4 --dhead 128 --window 100,3"
dc_tests '*Backward*:*Bwd*:Concurrency*' 330
