#!/usr/bin/env bash
# Session 25: the backward tests on the exact code to land (deterministic hdim 128 full on 80-row
# steps), 4 shards line-buffered, test_c_api_gpu, then memcheck and racecheck on the 80-row
# kernels in both modes (grid cases and the runner), within one 600 s call.
set -u
G=$(cd "$(dirname "$0")" && pwd)
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
[ -d "$G/bin" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/bundle.txz" "$G"
export LD_LIBRARY_PATH=$G/lib
B=$G/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
t0=$SECONDS
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k timeout 370 stdbuf -oL "$B/test_gpu" --gtest_filter='*Backward*:*Bwd*' \
    > "$O/bwd_tests_$k.txt" 2>&1 &
done; wait
echo "tests in $((SECONDS - t0)) s"
for k in 0 1 2 3; do echo "shard $k: $(grep -c '^\[       OK' "$O/bwd_tests_$k.txt") ok"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$O/bwd_tests_$k.txt" | head -5; done
timeout 30 "$B/test_c_api_gpu" > "$O/test_c_api_gpu.txt" 2>&1; echo "test_c_api_gpu rc=$?"; tail -2 "$O/test_c_api_gpu.txt"
R="$B/runner --bwd --kernel wgmma --batch 1 --seq 300 --seq-k 457 --heads 8 --heads-kv 2 --dhead 128"
for tool in memcheck racecheck; do
  timeout 45 compute-sanitizer --tool $tool --error-exitcode 9 $R > "$O/${tool}_runner.txt" 2>&1
  echo "$tool runner (both modes) rc=$?"; grep -E "SUMMARY|OK|FAIL" "$O/${tool}_runner.txt" | head -4
done
F='Grid/BackwardGrid.MatchesReference/bf16_d128_full_sq257_sk129_gqa4:Grid/BackwardGrid.MatchesReference/f16_d64_causal_sq113_sk203_mqa'
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 "$B/test_gpu" --gtest_filter="$F" > "$O/$tool.txt" 2>&1
  echo "$tool grid rc=$?"; tail -2 "$O/$tool.txt"
done
echo "total $((SECONDS - t0)) s"
