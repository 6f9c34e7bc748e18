#!/usr/bin/env bash
# Session 37, call 1: A = the tree at a399617 (full build); E2 / E4 = the first 2 / 4 of 16
# n-tiles of each row's exponentials on the FMA pipe (emulated_exp2) in the uncapped hdim 64
# 128-key kernels (session 36's prepared patch); N = E0 without the pingpong turns at hdim 64
# (three consumer warpgroups issue their GEMMs freely). E2 / E4 / N: subset builds (wgmma_persistent,
# hdim 64). Predictions in docs/NOTES.md "Session 37". Benches only.
set -u
source benchmarks/device_call.sh
dc_setup A > /dev/null
DC_BENCH_FLAGS="" dc_abn "A E2 E4 N" '^fwd/wgmma_persistent' \
  "--seq 8192 --dhead 64 --batch 2 --heads 32 --causal --kernel wgmma_persistent" \
  "--seq 8192 --dhead 64 --batch 2 --heads 32 --kernel wgmma_persistent" \
  "--seq 16384 --dhead 64 --batch 1 --heads 32 --kernel wgmma_persistent" \
  "--seq 2048 --dhead 64 --batch 8 --heads 32 --causal --kernel wgmma_persistent" \
  "--seq 4096 --dhead 64 --batch 4 --heads 32 --kernel wgmma_persistent" \
  "--varlen --dhead 64 --heads 32 --causal --kernel wgmma_persistent" > "$O/ab_fwd.txt" 2>&1
for t in E2 E4 N; do dc_summary A $t "$O/ab_fwd.txt"; done | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
