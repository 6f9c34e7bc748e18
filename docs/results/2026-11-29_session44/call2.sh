#!/usr/bin/env bash
# Session 44, call 2: A = session 43's build, M = A + O staged by stmatrix (call 1), Q = M + the
# single-tile grid's producer fetching into L2 the Q and first K / V boxes of the tile blockIdx +
# sm_count (tma_prefetch_l2_4d), T = M with hdim 64 in two stages (FA4's count; ours three).
# A/B only (fwd_09 recompiled and relinked); the runner's checks of Q and T first.
set -u
source benchmarks/device_call.sh
dc_setup A > /dev/null
{
  for t in Q T; do
    for c in "--dhead 256 --batch 3 --heads 4 --seq 700 --seq-k 333" "--dhead 256 --batch 2 --heads 4 --seq 1500 --causal" \
             "--dhead 128 --batch 3 --heads 4 --seq 700 --seq-k 333 --causal" "--dhead 64 --batch 2 --heads 6 --seq 1100" \
             "--dhead 64 --batch 2 --heads 4 --seq 1000 --seq-k 1300 --causal"; do
      timeout 90 "$G/$t/runner" --kernel wgmma_persistent $c 2>&1 | grep -E "OK|FAIL|rror" | sed "s/^/$t /"
    done
  done
} > "$O/runner.txt" 2>&1
grep -c OK "$O/runner.txt"; grep -E "FAIL|rror" "$O/runner.txt" | head
DC_BENCH_FLAGS="" dc_abn "M Q" '^fwd' \
  "--seq 512 --dhead 256 --kernel auto" "--seq 1024 --dhead 256 --kernel auto" "--seq 2048 --dhead 256 --kernel auto" \
  "--seq 512 --dhead 256 --causal --kernel auto" "--seq 2048 --dhead 256 --causal --kernel auto" \
  "--seq 8192 --dhead 128 --causal --kernel auto" > "$O/ab.txt" 2>&1
DC_BENCH_FLAGS="" dc_abn "M T" '^fwd' \
  "--seq 2048 --dhead 64 --kernel auto" "--seq 8192 --dhead 64 --kernel auto" "--seq 16384 --dhead 64 --kernel auto" \
  "--seq 2048 --dhead 64 --causal --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" >> "$O/ab.txt" 2>&1
DC_BENCH_FLAGS="" dc_abn "A M" '^fwd' \
  "--seq 512 --dhead 128 --kernel auto" "--seq 1024 --dhead 128 --causal --kernel auto" \
  "--seq 512 --dhead 256 --kernel auto" >> "$O/ab.txt" 2>&1
dc_summary M Q "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_summary M T "$O/ab.txt" | tee -a "$O/ab_summary.txt"
dc_summary A M "$O/ab.txt" | tee -a "$O/ab_summary.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
