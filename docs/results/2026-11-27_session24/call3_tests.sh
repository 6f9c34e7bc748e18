#!/usr/bin/env bash
# Session 24, call 3: the whole test_gpu (4 shards at once) and test_c_api_gpu on the h200
# preset build of e3e8831 (carried as .gpu/t/bundle.tgz), then memcheck and racecheck on the
# backward grid's hdim 128 full cases (the 80-row kernels, both modes) and a causal one.
set -u
cd "$(dirname "$0")"
[ -d bin ] || tar -xzf bundle.tgz
export LD_LIBRARY_PATH=$PWD/lib
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
t0=$SECONDS
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k timeout 330 bin/test_gpu --gtest_brief=1 > "$O/test_gpu_$k.txt" 2>&1 &
done; wait
echo "test_gpu in $((SECONDS - t0)) s"
for k in 0 1 2 3; do grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|FAILED TEST" "$O/test_gpu_$k.txt" | head -8; done
timeout 60 bin/test_c_api_gpu > "$O/test_c_api_gpu.txt" 2>&1; echo "test_c_api_gpu rc=$?"
F='Grid/BackwardGrid.MatchesReference/bf16_d128_full_sq257_sk129_gqa4:Grid/BackwardGrid.MatchesReference/f16_d128_full_sq113_sk203_mqa:Grid/BackwardGrid.MatchesReference/bf16_d128_causal_sq113_sk203_gqa4:BackwardDeterminism.OrderedDqUnderGqaAndMasks'
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 bin/test_gpu --gtest_filter="$F" > "$O/memcheck.txt" 2>&1
echo "memcheck rc=$?"; tail -3 "$O/memcheck.txt"
F2='Grid/BackwardGrid.MatchesReference/bf16_d128_full_sq257_sk129_gqa4:Grid/BackwardGrid.MatchesReference/bf16_d64_causal_sq113_sk203_gqa4'
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 bin/test_gpu --gtest_filter="$F2" > "$O/racecheck.txt" 2>&1
echo "racecheck rc=$?"; tail -3 "$O/racecheck.txt"
timeout 90 compute-sanitizer --tool racecheck bin/runner --bwd --kernel wgmma --batch 1 --seq 300 --seq-k 457 --heads 8 --heads-kv 2 --dhead 128 > "$O/racecheck_runner.txt" 2>&1
echo "racecheck runner (both modes) rc=$?"; grep -E "RACECHECK SUMMARY|OK|FAIL" "$O/racecheck_runner.txt" | head -4
