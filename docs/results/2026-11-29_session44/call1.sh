#!/usr/bin/env bash
# Session 44, call 1: A = the tree at 883974b (session 43's build), J = A with hdim 256's
# forward (fwd_09, the grid) without the pingpong turns (FA4's choice at hdim 256), M = A with
# the epilogue's O staged by stmatrix (two n-tiles per instruction) instead of 32-bit stores.
# A/B only (fwd_09 recompiled and relinked); the runner's checks of J and M first.
set -u
source benchmarks/device_call.sh
dc_setup A > /dev/null
{
  for t in J M; do
    for c in "--dhead 256 --batch 3 --heads 4 --seq 700 --seq-k 333" "--dhead 256 --batch 2 --heads 4 --seq 1500 --causal" \
             "--dhead 128 --batch 3 --heads 4 --seq 700 --seq-k 333 --causal" "--dhead 64 --batch 2 --heads 6 --seq 1100"; do
      timeout 90 "$G/$t/runner" --kernel wgmma_persistent $c 2>&1 | grep -E "OK|FAIL|rror" | sed "s/^/$t /"
    done
  done
} > "$O/runner.txt" 2>&1
grep -c OK "$O/runner.txt"; grep -E "FAIL|rror" "$O/runner.txt" | head
DC_BENCH_FLAGS="" dc_abn "A J M" '^fwd' \
  "--seq 512 --dhead 256 --kernel auto" "--seq 1024 --dhead 256 --kernel auto" "--seq 2048 --dhead 256 --kernel auto" \
  "--seq 8192 --dhead 256 --kernel auto" "--seq 512 --dhead 256 --causal --kernel auto" \
  "--seq 2048 --dhead 256 --causal --kernel auto" > "$O/ab.txt" 2>&1
DC_BENCH_FLAGS="" dc_abn "A M" '^fwd' \
  "--seq 512 --dhead 128 --kernel auto" "--seq 1024 --dhead 128 --causal --kernel auto" \
  "--seq 8192 --dhead 128 --kernel auto" "--seq 512 --dhead 64 --kernel auto" >> "$O/ab.txt" 2>&1
dc_summary A J "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_summary A M "$O/ab.txt" | tee -a "$O/ab_summary.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
