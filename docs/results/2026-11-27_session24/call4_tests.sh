#!/usr/bin/env bash
# Session 24, call 4: shard 2 of call 3's test_gpu (killed by its timeout, output lost to buffering),
# its backward and varlen-backward tests; memcheck on three backward grid cases.
set -u
cd "$(dirname "$0")"
[ -d bin ] || tar -xzf bundle.tgz
export LD_LIBRARY_PATH=$PWD/lib
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
t0=$SECONDS
GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=2 timeout 200 stdbuf -oL bin/test_gpu --gtest_brief=1 --gtest_filter='*Backward*:*Bwd*' > "$O/test_gpu_2_bwd.txt" 2>&1
echo "shard 2 backward rc=$? in $((SECONDS - t0)) s"; tail -4 "$O/test_gpu_2_bwd.txt"
F='Grid/BackwardGrid.MatchesReference/bf16_d128_full_sq257_sk129_gqa4:Grid/BackwardGrid.MatchesReference/f16_d128_full_sq113_sk203_mqa:Grid/BackwardGrid.MatchesReference/bf16_d128_causal_sq113_sk203_gqa4'
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 bin/test_gpu --gtest_filter="$F" > "$O/memcheck.txt" 2>&1
echo "memcheck rc=$?"; tail -3 "$O/memcheck.txt"
